"""The column grid of the cell join (``cell_join.py``): boxes sorted along a sweep axis and entered in the
square columns (cells of a 2D grid over the other two axes) they overlap, and the sweep over one column.

Grid layout (a tuple, the same for queries and elements):

- ``start`` (T + 1,) int64: the entries of bucket b are start[b] .. start[b + 1] - 1;
- ``entry`` (N,) int32: the box of each entry, as its row in the sorted arrays below;
- ``mask`` (N,) int8: bit 0 / bit 1 set when the entry's column is the box's lowest along axis u / v;
- ``key`` (N,) int64: the column's linear index (hashed buckets only; empty for dense buckets);
- ``box`` (n, 6) float64 [m], ``verts`` (n, 3) int32, ``obst`` (n,) bool, ``ids`` (n,) int64: the boxes,
  their vertex ids (padded to 3 columns with ids that match nothing), obstacle flags and original row,
  in ascending order of the box's lower side along the sweep axis.

Every box goes into the buckets in sorted order, so the entries of a bucket are sorted too, and the sweep
over a bucket stops at the first entry whose lower side lies beyond the current box's upper side (an exact
float comparison). A pair is reported only in the column holding the lower (u, v) corner of the two boxes'
intersection: per axis that is the larger of the two boxes' lowest columns, so the pair is reported in the
column iff the two masks OR to 0b11.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from ...runtime.jit import generic_njit


MAX_CELLS = 64  # a box covering more columns is left out of the grid ("overflow") and tested directly
_AXIS_MAX = (1 << 20) - 1  # at most 2^20 columns per axis (farther boxes are clamped into the border ones)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@nb.njit(cache=True, inline="always")
def cell_index(value, origin, inv_h):
    """Column coordinate of a coordinate value [m] along one axis, clamped to [0, _AXIS_MAX]."""
    t = (value - origin) * inv_h
    if t <= 0.0:
        return 0
    if t >= _AXIS_MAX:
        return _AXIS_MAX
    return int(t)


@nb.njit(cache=True, inline="always")
def _sweep_bin(value, sweep):
    """Bin of a coordinate value for the first pass of the sort: sweep = (origin [m], scale [1/m], n_bins);
    a monotone (non-decreasing) map onto 0 .. n_bins - 1."""
    t = (value - sweep[0]) * sweep[1]
    if not t > 0.0:
        return 0
    if t >= sweep[2] - 1.0:
        return int(sweep[2]) - 1
    return int(t)


@generic_njit
def sweep_order(box, axis, sweep):
    """(n,) int64 rows of ``box`` in ascending order of box[:, axis], ties in row order: a counting sort into
    the uniform bins of ``sweep`` (see ``_sweep_bin``), then each bin sorted by the exact coordinate."""
    n = box.shape[0]
    n_bins = int(sweep[2])
    lo_bin = np.empty(n, np.int64)
    start = np.zeros(n_bins + 1, np.int64)
    for i in range(n):
        lo_bin[i] = _sweep_bin(box[i, axis], sweep)
        start[lo_bin[i] + 1] += 1
    for b in range(n_bins):
        start[b + 1] += start[b]
    order = np.empty(n, np.int64)
    fill = start[:-1].copy()
    for i in range(n):
        order[fill[lo_bin[i]]] = i
        fill[lo_bin[i]] += 1
    for b in range(n_bins):
        g0, g1 = start[b], start[b + 1]
        if g1 - g0 > 32:
            group = order[g0:g1].copy()
            order[g0:g1] = group[np.argsort(box[group, axis], kind="mergesort")]
        else:  # insertion sort: stable, so ties stay in row order
            for r in range(g0 + 1, g1):
                i = order[r]
                x = box[i, axis]
                s = r - 1
                while s >= g0 and box[order[s], axis] > x:
                    order[s + 1] = order[s]
                    s -= 1
                order[s + 1] = i
    return order


@generic_njit
def column_grid(box, verts, obst, pad, axis, sweep, frame, bits):
    """The column grid of one box set (layout in the module docstring).

    Args:
        box: (n, 6) float64 [m]; verts: (n, k) int64 vertex ids (k <= 3); obst: (n,) bool obstacle flags.
        pad: -1 or -2: vertex ids are padded to 3 columns with pad - 2 * row (negative, distinct per box;
            grids padded with different ``pad`` never match each other).
        axis: the sweep axis; the columns are over axes u = axis + 1 and v = axis + 2 (mod 3).
        sweep: (origin [m], scale [1/m], n_bins) of the sort's first pass (``sweep_order``).
        frame: (origin_u [m], origin_v [m], 1 / h [1/m], columns along u, columns along v).
        bits: -1 for dense buckets (the column's linear index), else log2 of the number of hash buckets.

    Returns (grid, overflow): overflow (j,) int64 ascending original rows of the boxes covering more than
    ``MAX_CELLS`` columns (not in the buckets).
    """
    n, k = verts.shape
    order = sweep_order(box, axis, sweep)
    au, av = (axis + 1) % 3, (axis + 2) % 3
    ou, ov, inv_h = frame[0], frame[1], frame[2]
    du, dv = int(frame[3]), int(frame[4])
    dense = bits < 0
    n_buckets = du * dv if dense else 1 << bits
    shift = np.uint64(64 - max(bits, 1))
    s_box = np.empty((n, 6), np.float64)
    s_verts = np.empty((n, 3), np.int32)
    s_obst = np.empty(n, np.bool_)
    cols = np.empty((n, 4), np.int64)  # lowest and highest column along u, then along v; -1: overflow
    start = np.zeros(n_buckets + 1, np.int64)
    n_over = 0
    for s in range(n):  # copy in sweep order, find the columns, count the entries per bucket
        i = order[s]
        for a in range(6):
            s_box[s, a] = box[i, a]
        for c in range(k):
            s_verts[s, c] = verts[i, c]
        for c in range(k, 3):
            s_verts[s, c] = pad - 2 * i
        s_obst[s] = obst[i]
        u0, u1 = cell_index(box[i, au], ou, inv_h), cell_index(box[i, 3 + au], ou, inv_h)
        v0, v1 = cell_index(box[i, av], ov, inv_h), cell_index(box[i, 3 + av], ov, inv_h)
        if (u1 - u0 + 1) * (v1 - v0 + 1) > MAX_CELLS:
            cols[s, 0] = -1
            n_over += 1
            continue
        cols[s, 0], cols[s, 1], cols[s, 2], cols[s, 3] = u0, u1, v0, v1
        for iv in range(v0, v1 + 1):
            for iu in range(u0, u1 + 1):
                key = iu + du * iv
                start[1 + (key if dense else np.int64((np.uint64(key) * _GOLDEN) >> shift))] += 1
    for b in range(n_buckets):
        start[b + 1] += start[b]
    total = start[n_buckets]
    fill = start[:-1].copy()
    entry = np.empty(total, np.int32)
    mask = np.empty(total, np.int8)
    keys = np.empty(0 if dense else total, np.int64)
    overflow = np.empty(n_over, np.int64)
    j = 0
    for s in range(n):  # scatter in sweep order: every bucket ends up sorted
        u0, u1, v0, v1 = cols[s, 0], cols[s, 1], cols[s, 2], cols[s, 3]
        if u0 < 0:
            overflow[j] = order[s]
            j += 1
            continue
        for iv in range(v0, v1 + 1):
            for iu in range(u0, u1 + 1):
                key = iu + du * iv
                b = key if dense else np.int64((np.uint64(key) * _GOLDEN) >> shift)
                r = fill[b]
                fill[b] = r + 1
                entry[r] = s
                mask[r] = np.int8((1 if iu == u0 else 0) | (2 if iv == v0 else 0))
                if not dense:
                    keys[r] = key
    overflow.sort()
    return (start, entry, mask, keys, s_box, s_verts, s_obst, order), overflow


SELF, QUERY_SIDE, ELEMENT_SIDE = 0, 1, 2  # sweep directions of ``sweep_bucket``


@generic_njit
def sweep_bucket(b, grid_a, grid_c, side, axis, out, out0, n, cap):
    """One sweep over bucket b: each entry of grid_a against the entries of grid_c whose box's lower side
    along ``axis`` lies in [lo(a), hi(a)] (``SELF``: the later entries of the same grid), or in (lo(a), hi(a)]
    for ``ELEMENT_SIDE`` (a is an element, c a query; ties belong to the ``QUERY_SIDE`` sweep). The entries
    are in sweep order, so the scan stops at the first c beyond hi(a).

    Pairs that also overlap along the other axes, belong to this column, share no vertex id and are not
    two obstacles go to out[out0 + n ...] packed as (query << 32) | element ([smaller, larger] for SELF), at
    most ``cap`` of them; returns the new count n (counting on past cap)."""
    a_start, a_entry, a_mask, a_key, a_box, a_verts, a_obst, a_ids = grid_a
    c_start, c_entry, c_mask, c_key, c_box, c_verts, c_obst, c_ids = grid_c
    hashed = c_key.shape[0] > 0
    p, c_end = c_start[b], c_start[b + 1]
    for ea in range(a_start[b], a_start[b + 1]):
        a = a_entry[ea]
        lo_s = a_box[a, axis]
        if side == SELF:
            p = ea + 1
        elif side == QUERY_SIDE:
            while p < c_end and c_box[c_entry[p], axis] < lo_s:
                p += 1
        else:
            while p < c_end and c_box[c_entry[p], axis] <= lo_s:
                p += 1
        need = a_mask[ea] ^ 3
        lo0, lo1, lo2 = a_box[a, 0], a_box[a, 1], a_box[a, 2]
        hi0, hi1, hi2 = a_box[a, 3], a_box[a, 4], a_box[a, 5]
        top = a_box[a, 3 + axis]
        u0, u1, u2 = a_verts[a, 0], a_verts[a, 1], a_verts[a, 2]
        oa, ia = a_obst[a], a_ids[a]
        ka = a_key[ea] if hashed else 0
        for ec in range(p, c_end):
            c = c_entry[ec]
            if c_box[c, axis] > top:
                break  # this and every later entry start beyond a's box along the sweep axis
            if not (((c_mask[ec] & need) == need) & (lo0 <= c_box[c, 3]) & (c_box[c, 0] <= hi0)
                    & (lo1 <= c_box[c, 4]) & (c_box[c, 1] <= hi1) & (lo2 <= c_box[c, 5]) & (c_box[c, 2] <= hi2)):
                continue
            w0, w1, w2 = c_verts[c, 0], c_verts[c, 1], c_verts[c, 2]
            if ((u0 == w0) | (u0 == w1) | (u0 == w2) | (u1 == w0) | (u1 == w1) | (u1 == w2) | (u2 == w0)
                    | (u2 == w1) | (u2 == w2)):
                continue  # shared vertex
            if oa & c_obst[c]:
                continue  # two obstacles
            if hashed and c_key[ec] != ka:
                continue  # another column in the same hash bucket
            j = c_ids[c]
            if n < cap:
                if side == ELEMENT_SIDE:
                    out[out0 + n] = (j << 32) | ia
                elif side == SELF:
                    out[out0 + n] = (min(ia, j) << 32) | max(ia, j)
                else:
                    out[out0 + n] = (ia << 32) | j
            n += 1
    return n


@generic_njit
def join_buckets(b0, b1, grid_q, grid_e, self_query, axis, out, out0, cap):
    """Pairs found in the buckets b0 .. b1 - 1 of two grids sharing axis, columns and buckets (the same
    grid in self mode): every two entries of a bucket once in self mode, else every query entry against
    every element entry (two sweeps, see ``sweep_bucket``). Returns the count (> cap: run again with more
    room)."""
    n = 0
    qs, es = grid_q[0], grid_e[0]
    for b in range(b0, b1):
        if self_query:
            if qs[b + 1] - qs[b] > 1:
                n = sweep_bucket(b, grid_q, grid_q, SELF, axis, out, out0, n, cap)
        elif qs[b] < qs[b + 1] and es[b] < es[b + 1]:
            n = sweep_bucket(b, grid_q, grid_e, QUERY_SIDE, axis, out, out0, n, cap)
            n = sweep_bucket(b, grid_e, grid_q, ELEMENT_SIDE, axis, out, out0, n, cap)
    return n
