"""The layout shared by the column joins (``cell_join.py``, ``compact_join.py``): the boxes' bounds, the sweep
axis, the column side h, the first pass of the sweep sort and the frame of the column grid."""
from __future__ import annotations

import numba as nb
import numpy as np

from .columns import cell_index

CELL_FACTOR = 1.5  # column side / mean largest box side across the sweep axis
SORT_BINS_PER_BOX = 2  # uniform bins per box of the sort's counting pass (``columns.sweep_order``)


@nb.njit(cache=True)
def bounds(box_a, box_b):
    """(lo (3,), hi (3,)) [m]: the bounding box of all boxes of the two (n, 6) arrays (zeros if none)."""
    lo = np.full(3, np.inf)
    hi = np.full(3, -np.inf)
    for box in (box_a, box_b):
        for i in range(box.shape[0]):
            for a in range(3):
                lo[a] = min(lo[a], box[i, a])
                hi[a] = max(hi[a], box[i, 3 + a])
    for a in range(3):
        if not lo[a] <= hi[a]:
            lo[a] = 0.0
            hi[a] = 0.0
    return lo, hi


@nb.njit(cache=True)
def sweep_axis(lo, hi):
    """The axis of the largest extent of the bounding box [lo, hi] (the first on ties)."""
    axis = 0
    for a in range(1, 3):
        if hi[a] - lo[a] > hi[axis] - lo[axis]:
            axis = a
    return axis


@nb.njit(cache=True)
def mean_extent(box, axis=-1):
    """Mean over the (n, 6) boxes of their largest side [m], or of their largest side across ``axis`` when
    axis >= 0 (0 for no boxes)."""
    s = 0.0
    for i in range(box.shape[0]):
        side = 0.0
        for a in range(3):
            if a != axis:
                side = max(side, box[i, 3 + a] - box[i, a])
        s += side
    return s / max(box.shape[0], 1)


@nb.njit(cache=True)
def choose_cell_size(q_box, e_box):
    """Column side h [m]: ``CELL_FACTOR`` x the larger of the two box sets' mean largest side across the
    sweep axis; for boxes of zero size, about one box per column; never below 2^-19 of the scene's
    extent."""
    lo, hi = bounds(q_box, e_box)
    return cell_size(q_box, e_box, lo, hi, sweep_axis(lo, hi))


@nb.njit(cache=True)
def cell_size(q_box, e_box, lo, hi, axis):
    """``choose_cell_size`` given the boxes' bounds [lo, hi] and the sweep axis."""
    extent = max(hi[(axis + 1) % 3] - lo[(axis + 1) % 3], hi[(axis + 2) % 3] - lo[(axis + 2) % 3])
    n = q_box.shape[0] + e_box.shape[0]
    h = CELL_FACTOR * max(mean_extent(q_box, axis), mean_extent(e_box, axis))
    if not h > 0.0:
        h = extent / max(1.0, np.sqrt(n))
    h = max(h, (hi[axis] - lo[axis]) * 2.0 ** -19)
    return h if h > 0.0 else 1.0


@nb.njit(cache=True)
def bucket_bits(n_columns, n_boxes):
    """-1 (dense buckets: the column's linear index) when the grid has few enough columns, else log2 of a
    hash table size of about 4 buckets per box."""
    if n_columns <= 8 * n_boxes + 4096:
        return -1
    bits = 4
    while (1 << bits) < 4 * n_boxes:
        bits += 1
    return bits


@nb.njit(cache=True)
def sweep_layout(q_box, e_box, self_query, h):
    """The layout of a join of the (nq, 6) and (ne, 6) boxes [m] (e_box ignored in self mode).

    Returns (lo (3,), hi (3,), axis, h, sweep): the boxes' bounds [m], the sweep axis, the column side h [m]
    (``cell_size`` where the given h <= 0) and the first sort pass (origin [m], scale [1/m], n_bins) of
    ``columns.sweep_order``."""
    others = e_box[:0] if self_query else e_box  # self: one pass
    lo, hi = bounds(q_box, others)
    axis = sweep_axis(lo, hi)
    if not h > 0.0:
        h = cell_size(q_box, others, lo, hi, axis)
    n_bins = SORT_BINS_PER_BOX * (q_box.shape[0] + others.shape[0]) + 64
    extent = hi[axis] - lo[axis]
    return lo, hi, axis, h, (lo[axis], n_bins / extent if extent > 0.0 else 0.0, float(n_bins))


@nb.njit(cache=True)
def column_frame(lo, hi, axis, h):
    """(origin_u [m], origin_v [m], 1 / h [1/m], columns along u, columns along v) of the columns of side h [m]
    over the bounds [lo, hi] (u = axis + 1, v = axis + 2 mod 3), as ``columns.column_grid`` takes it."""
    au, av = (axis + 1) % 3, (axis + 2) % 3
    du = cell_index(hi[au], lo[au], 1.0 / h) + 1
    dv = cell_index(hi[av], lo[av], 1.0 / h) + 1
    return (lo[au], lo[av], 1.0 / h, float(du), float(dv))
