"""Box pairs of small box sets: the cell join (``cell_join.py``) with compact columns.

The same columns, sweep order, stopping test and "one column per pair" rule as the cell join, laid out for
few boxes: every entry of a column is a contiguous row of its own (the box's sides along the sweep axis and
the two column axes, its vertex ids, row and flags), so a sweep reads its columns front to back without going
through a box index. The tests of a pair are computed without branches (on a mesh about half of the tested
pairs overlap and most of those share a vertex, so branches on either are mispredicted half of the time);
every tested pair is written to the next free slot, which only an accepted pair keeps. A shared vertex is
found by stamping the vertex ids of the sweeping entry into a scratch array (three loads per tested pair
instead of nine comparisons), and loop indices are unsigned, which spares Numba's negative-index wraparound
in the inner loop.

Inputs this layout does not fit are left to the cell join (``compact_join_pairs`` returns ok = False): a
column grid too large for dense buckets, a box covering more than ``columns.MAX_CELLS`` columns, more than
``MAX_ENTRIES_PER_BOX`` column entries per box, a box with lo > hi (or NaN), vertex ids < 0 or far beyond the
number of boxes (``id_bound``).

Measured (teddy grasp, 20 captured Newton iterations; shared 2-core machine, medians of interleaved calls):
vertex-face join (446 + 880 boxes) 94 us against 121 us for ``cell_join.cell_join_pairs``, edge-edge join
(1,320 boxes in 56 columns, 2,800 entries, 15,000 tested pairs of which 600 are kept) 131 us against 231 us.
What is left is about half grid (sort, column ranges, rows) and half sweep; the sweep is bound by one
mispredicted loop exit per entry and ~45 instructions per tested pair. Tried and dropped: growing the pair
buffer inside the sweep (reference counting per entry: 2x slower), a branch-free 2 x 2 scatter of the rows
(slower), testing a fixed window of 8 entries at a time (not vectorised by LLVM: 3x slower).
"""
from __future__ import annotations

import numba as nb
import numpy as np

from ...runtime.jit import generic_njit
from .columns import MAX_CELLS, cell_index, sweep_order
from .layout import bucket_bits, column_frame, sweep_layout
from .pair_buffers import sort_pairs

MAX_ENTRIES_PER_BOX = 8  # more column entries per box (many long boxes): the cell join and its overflow
_OBSTACLE = 4  # flag bit of an obstacle entry; bits 0 and 1: the box's lowest column along u / along v


@generic_njit
def column_ranges(box, axis, frame, max_entries):
    """Column ranges of the (n, 6) boxes [m] and the number of entries per column.

    Returns (cols (n, 4) int64 [u0, u1, v0, v1] per box, start (du * dv + 1,) int64 with the entries of column
    c at start[c + 1] (not yet summed)); start is empty when a box covers more than ``MAX_CELLS`` columns, the
    entries exceed ``max_entries`` or a box is not one (lo <= hi fails along an axis: inverted, or NaN)."""
    au, av = (axis + 1) % 3, (axis + 2) % 3
    ou, ov, inv_h, du = frame[0], frame[1], frame[2], int(frame[3])
    n = box.shape[0]
    cols = np.empty((n, 4), np.int64)
    start = np.zeros(du * int(frame[4]) + 1, np.int64)
    total = 0
    for i in range(n):
        u0, u1 = cell_index(box[i, au], ou, inv_h), cell_index(box[i, 3 + au], ou, inv_h)
        v0, v1 = cell_index(box[i, av], ov, inv_h), cell_index(box[i, 3 + av], ov, inv_h)
        total += (u1 - u0 + 1) * (v1 - v0 + 1)
        proper = (box[i, 0] <= box[i, 3]) & (box[i, 1] <= box[i, 4]) & (box[i, 2] <= box[i, 5])
        if (u1 - u0 + 1) * (v1 - v0 + 1) > MAX_CELLS or total > max_entries or not proper:
            return cols, start[:0]
        cols[i, 0], cols[i, 1], cols[i, 2], cols[i, 3] = u0, u1, v0, v1
        for iv in range(v0, v1 + 1):
            for iu in range(u0, u1 + 1):
                start[1 + iu + du * iv] += 1
    return cols, start


@generic_njit
def compact_grid(box, verts, obst, dummy, axis, order, frame, max_entries):
    """The compact columns of one box set.

    Args:
        box: (n, 6) float64 [m]; verts: (n, k) int64 vertex ids in [0, dummy) (k <= 3); obst: (n,) bool
            obstacle flags.
        dummy: the id that pads the vertex ids to 3 per entry (shared by no vertex, see ``stamp_vertices``).
        axis: the sweep axis; order: (n,) the rows of ``box`` in ascending order of box[:, axis].
        frame: the columns (``layout.column_frame``); max_entries: the most entries the grid may have.

    Returns (start, fbox, ibox): start (C + 1,) int64, the entries of column c are rows start[c] ..
    start[c + 1] - 1, in ascending order of the box's lower side along the sweep axis; fbox (N, 6) float64 [m]
    [lo, hi along the sweep axis, lo, hi along u, lo, hi along v]; ibox (N, 5) int32 [3 vertex ids, box row,
    flags (bits 0, 1: the box's lowest column along u, v; bit 2: obstacle)]. start is empty (and N = 0) when
    the boxes do not fit (``column_ranges``)."""
    n, k = verts.shape
    cols, start = column_ranges(box, axis, frame, max_entries)
    if start.shape[0] == 0:
        return start, np.empty((0, 6), np.float64), np.empty((0, 5), np.int32)
    for c in range(start.shape[0] - 1):
        start[c + 1] += start[c]
    fill = start[:-1].copy()
    fbox = np.empty((start[-1], 6), np.float64)
    ibox = np.empty((start[-1], 5), np.int32)
    du, au, av = int(frame[3]), (axis + 1) % 3, (axis + 2) % 3
    for s in range(n):  # scatter in sweep order: every column ends up sorted
        i = order[s]
        u0, u1, v0, v1 = cols[i, 0], cols[i, 1], cols[i, 2], cols[i, 3]
        sides = (box[i, axis], box[i, 3 + axis], box[i, au], box[i, 3 + au], box[i, av], box[i, 3 + av])
        ids = (verts[i, 0] if k > 0 else dummy, verts[i, 1] if k > 1 else dummy, verts[i, 2] if k > 2 else dummy)
        flags = _OBSTACLE if obst[i] else 0
        for iv in range(v0, v1 + 1):
            for iu in range(u0, u1 + 1):
                r = fill[iu + du * iv]
                fill[iu + du * iv] = r + 1
                fbox[r, 0], fbox[r, 1], fbox[r, 2], fbox[r, 3], fbox[r, 4], fbox[r, 5] = sides
                ibox[r, 0], ibox[r, 1], ibox[r, 2], ibox[r, 3] = ids[0], ids[1], ids[2], i
                ibox[r, 4] = flags | (1 if iu == u0 else 0) | (2 if iv == v0 else 0)
    return start, fbox, ibox


@generic_njit
def stamp_vertices(ibox, a, stamp, tag):
    """Mark the vertex ids of entry a (uint64) of ibox as tag in stamp ((dummy + 2,) int64): stamp[id] = tag; the
    padding id ``dummy`` = stamp.shape[0] - 2 is marked in the last slot instead, so that it never matches."""
    dummy = stamp.shape[0] - 2
    for c in range(3):
        w = ibox[a, c]
        stamp[np.uint64(w + (w == dummy))] = tag


@generic_njit
def accepts(need, mask, lu, hu, lv, hv, tag, stamp, fbox, ibox, c):
    """Whether entry c of (fbox, ibox) pairs with an entry a of the same column that it overlaps along the sweep
    axis, given a's sides lu, hu, lv, hv [m] along u and v, its vertices stamped with tag (``stamp_vertices``)
    and its flags fa as need = ~fa & 3, mask = need | (fa & obstacle bit). Accepted: the boxes overlap along u
    and v (lo <= hi, exact comparisons), the column holds the lower (u, v) corner of their intersection (c
    starts in it along each axis along which a does not), no shared vertex id, not two obstacles."""
    shared = ((stamp[np.uint64(ibox[c, 0])] == tag) | (stamp[np.uint64(ibox[c, 1])] == tag)
              | (stamp[np.uint64(ibox[c, 2])] == tag))
    return (((ibox[c, 4] & mask) == need) & (lu <= fbox[c, 3]) & (fbox[c, 2] <= hu) & (lv <= fbox[c, 5])
            & (fbox[c, 4] <= hv) & ~shared)


@generic_njit
def sweep_self(e0, e1, fbox, ibox, stamp, out, n, cap):
    """Every two entries e0 <= a < c < e1 (uint64) of one column once: c from a + 1 on until the first whose
    lower side lies beyond a's upper side along the sweep axis. Accepted pairs (``accepts``; a's tag: its entry
    index) go to out[n ...] packed as (a's row << 32) | c's row (not ordered: see ``joined_pairs``); out has
    cap + 1 slots (every tested pair is written, at out[min(n, cap)]). Returns the new count n (counting on past
    cap)."""
    for ea in range(e0, e1):
        top, tag, ia = fbox[ea, 1], np.int64(ea), np.int64(ibox[ea, 3]) << 32
        lu, hu, lv, hv = fbox[ea, 2], fbox[ea, 3], fbox[ea, 4], fbox[ea, 5]
        need = ~ibox[ea, 4] & 3
        mask = need | (ibox[ea, 4] & _OBSTACLE)
        stamp_vertices(ibox, ea, stamp, tag)
        for ec in range(ea + np.uint64(1), e1):
            if fbox[ec, 0] > top:
                break
            ok = accepts(need, mask, lu, hu, lv, hv, tag, stamp, fbox, ibox, ec)
            out[np.uint64(min(n, cap))] = ia | np.int64(ibox[ec, 3])
            n += ok
    return n


@generic_njit
def sweep_cross(a0, a1, fa_box, ia_box, c0, c1, fc_box, ic_box, ties, tag0, stamp, out, n, cap):
    """Each entry a0 <= a < a1 of one grid against the entries c0 <= c < c1 (uint64) of the same column of the
    other grid whose lower side along the sweep axis lies in [lo(a), hi(a)] (``ties`` False: a is a query) or
    in (lo(a), hi(a)] (``ties`` True: a is an element; equal lower sides belong to the query's sweep). Pairs
    are packed (query row << 32) | element row; a's tag is tag0 + its entry index; output as ``sweep_self``."""
    p = c0
    shift_a, shift_c = (0, 32) if ties else (32, 0)
    for ea in range(a0, a1):
        lo_s = fa_box[ea, 0]
        while p < c1 and (fc_box[p, 0] < lo_s or (ties and fc_box[p, 0] == lo_s)):
            p += np.uint64(1)
        top, tag, ia = fa_box[ea, 1], tag0 + np.int64(ea), np.int64(ia_box[ea, 3])
        lu, hu, lv, hv = fa_box[ea, 2], fa_box[ea, 3], fa_box[ea, 4], fa_box[ea, 5]
        need = ~ia_box[ea, 4] & 3
        mask = need | (ia_box[ea, 4] & _OBSTACLE)
        stamp_vertices(ia_box, ea, stamp, tag)
        for ec in range(p, c1):
            if fc_box[ec, 0] > top:
                break
            ok = accepts(need, mask, lu, hu, lv, hv, tag, stamp, fc_box, ic_box, ec)
            out[np.uint64(min(n, cap))] = (ia << shift_a) | (np.int64(ic_box[ec, 3]) << shift_c)
            n += ok
    return n


@generic_njit
def join_columns(grid_q, grid_e, self_query, stamp, out, cap):
    """The accepted pairs of all columns of two compact grids with the same columns (one grid in self mode)
    into out (cap + 1 slots); stamp: (dummy + 2,) int64 scratch for ``stamp_vertices``, all -1 or earlier
    tags of this join. Returns the count (> cap: run again with more room)."""
    sq, fq, iq = grid_q
    se, fe, ie = grid_e
    n = 0
    for b in range(sq.shape[0] - 1):
        q0, q1 = np.uint64(sq[b]), np.uint64(sq[b + 1])
        if self_query:
            n = sweep_self(q0, q1, fq, iq, stamp, out, n, cap)
            continue
        e0, e1 = np.uint64(se[b]), np.uint64(se[b + 1])
        if q0 < q1 and e0 < e1:
            n = sweep_cross(q0, q1, fq, iq, e0, e1, fe, ie, False, 0, stamp, out, n, cap)
            n = sweep_cross(e0, e1, fe, ie, q0, q1, fq, iq, True, fq.shape[0], stamp, out, n, cap)
    return n


@generic_njit
def joined_pairs(grid_q, grid_e, self_query, n_ids, guess, n_first):
    """(m, 2) int64 sorted pairs of two compact grids (``join_columns``) whose vertex ids lie in [0, n_ids);
    guess: expected pair count (sizes the first buffer); first ids in [0, n_first)."""
    cap = max(guess, 64)
    out = np.empty(cap + 1, np.int64)
    stamp = np.full(n_ids + 2, -1, np.int64)
    n = join_columns(grid_q, grid_e, self_query, stamp, out, cap)
    if n > cap:  # the stamps left are this join's own tags, which it sets again in the same order
        out = np.empty(n + 1, np.int64)
        n = join_columns(grid_q, grid_e, self_query, stamp, out, n)
    if self_query:  # rows [smaller, larger]
        for t in range(n):
            i, j = out[t] >> 32, out[t] & 0xFFFFFFFF
            out[t] = (min(i, j) << 32) | max(i, j)
    return sort_pairs(out, n, n_first)


@generic_njit
def id_bound(verts_a, verts_b, n_boxes):
    """1 + the largest vertex id of the two (n, k) int64 arrays, or -1 when an id is negative or the ids reach
    beyond 4 per box + 1024 (``stamp_vertices`` then needs too large a scratch array)."""
    lo, hi = 0, -1
    for verts in (verts_a, verts_b):
        for i in range(verts.shape[0]):
            for c in range(verts.shape[1]):
                lo, hi = min(lo, verts[i, c]), max(hi, verts[i, c])
    return hi + 1 if lo >= 0 and hi < 4 * n_boxes + 1024 else -1


@nb.njit(cache=True, nogil=True)
def compact_join_pairs(q_data, e_data, self_query, h, guess):
    """``cell_join.cell_join_pairs`` (same arguments, same pairs) for inputs that fit compact columns.

    Returns ((m, 2) int64 pairs sorted lexicographically, ok); ok False (no pairs): the boxes do not fit
    (module docstring), run ``cell_join.cell_join_pairs`` instead. Releases the GIL."""
    qbox, ebox = q_data[0], e_data[0]
    nq, ne = qbox.shape[0], ebox.shape[0]
    lo, hi, axis, h, sweep = sweep_layout(qbox, ebox, self_query, h)
    frame = column_frame(lo, hi, axis, h)
    n_ids = id_bound(q_data[1], e_data[1], nq + ne)
    if n_ids < 0 or bucket_bits(int(frame[3]) * int(frame[4]), nq + (0 if self_query else ne)) >= 0:
        return np.empty((0, 2), np.int64), False
    grid_q = compact_grid(qbox, q_data[1], q_data[2], n_ids, axis, sweep_order(qbox, axis, sweep), frame,
                          MAX_ENTRIES_PER_BOX * nq + 64)
    grid_e = grid_q
    if not self_query:
        grid_e = compact_grid(ebox, e_data[1], e_data[2], n_ids, axis, sweep_order(ebox, axis, sweep), frame,
                              MAX_ENTRIES_PER_BOX * ne + 64)
    if grid_q[0].shape[0] == 0 or grid_e[0].shape[0] == 0:
        return np.empty((0, 2), np.int64), False
    return joined_pairs(grid_q, grid_e, self_query, n_ids, guess, nq), True
