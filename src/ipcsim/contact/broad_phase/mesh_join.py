"""The vertex-face and edge-edge pairs of a small mesh in one call: both compact column joins
(``compact_join.py``) set up together.

What one call shares: the boxes' bounds and the sweep axis (those of the vertex boxes, which hold every face
and edge box), the face and edge boxes (unions of their vertex boxes, computed here) and the sort along the
sweep axis: the lower side of a face or edge box is that of one of its vertices, so once the vertices are
sorted (``columns.sweep_order``), the faces and edges sort exactly by a counting sort on the rank of their
lowest vertex. The pairs are those of two ``cell_join.cell_pairs6`` calls (the same sets, sorted the same
way); only the columns may differ, which no result depends on.

Measured on the teddy grasp (446 vertices, 880 faces, 1,320 edges; shared 2-core machine, medians of
interleaved calls): both joins 211 us in one call, 238 us as two ``compact_join_pairs`` calls, 437 us as two
``cell_join.cell_join_pairs`` calls. Its stages, one input repeated: face and edge boxes 7 us, bounds and
columns 3, vertex sort 3, face and edge orders 10, grids 7 (vertices) + 17 (faces) + 25 (edges), joins 24
(vertex-face) + 66 (edge-edge).
"""
from __future__ import annotations

import numba as nb
import numpy as np

from ...runtime.jit import generic_njit
from .boxes import simplex_boxes6
from .cell_join import pair_guess, remember_pairs
from .compact_join import MAX_ENTRIES_PER_BOX, compact_grid, joined_pairs
from .columns import sweep_order
from .layout import SORT_BINS_PER_BOX, bounds, bucket_bits, cell_size, column_frame, sweep_axis


@generic_njit
def order_by_lowest_vertex(simplices, v_order):
    """(m,) int64 rows of ``simplices`` ((m, k) int64 vertex ids) in ascending order of the rank in ``v_order``
    ((n,) vertex ids in sweep order) of their lowest-ranked vertex; ties in row order (a counting sort)."""
    n = v_order.shape[0]
    m, k = simplices.shape
    rank = np.empty(n, np.int64)
    for s in range(n):
        rank[v_order[s]] = s
    key = np.empty(m, np.int64)
    start = np.zeros(n + 1, np.int64)
    for i in range(m):
        r = rank[simplices[i, 0]]
        for c in range(1, k):
            r = min(r, rank[simplices[i, c]])
        key[i] = r
        start[r + 1] += 1
    for s in range(n):
        start[s + 1] += start[s]
    order = np.empty(m, np.int64)
    for i in range(m):
        order[start[key[i]]] = i
        start[key[i]] += 1
    return order


@generic_njit
def _frame(q_box, e_box, lo, hi, axis):
    """The column frame of a join of q_box and e_box within the bounds [lo, hi] (``layout.column_frame``), and
    whether its columns fit dense buckets."""
    frame = column_frame(lo, hi, axis, cell_size(q_box, e_box, lo, hi, axis))
    return frame, bucket_bits(int(frame[3]) * int(frame[4]), q_box.shape[0] + e_box.shape[0]) < 0


@nb.njit(cache=True, nogil=True)
def mesh_join_pairs(vbox, faces, edges, v_obst, f_obst, e_obst, guess_vf, guess_ee):
    """Vertex-face and edge-edge pairs with overlapping boxes that pass the IPC exclusions.

    Args:
        vbox: (n, 6) float64 [m] vertex boxes [lo, hi]; faces: (nf, 3) int64 and edges: (ne, 2) int64 vertex
            ids in [0, n); v_obst (n,), f_obst (nf,), e_obst (ne,) bool obstacle flags.
        guess_vf, guess_ee: expected pair counts (size the first buffers).

    Returns:
        (vf (a, 2) int64 [vertex, face], ee (b, 2) int64 [edge, edge] with edge < edge, ok), rows sorted
        lexicographically, the pairs of ``cell_join.cell_pairs6`` (shared vertex ids and obstacle-obstacle
        pairs excluded). ok False (no pairs): the boxes do not fit compact columns, use ``cell_pairs6``.
    """
    n = vbox.shape[0]
    fbox, ebox = simplex_boxes6(vbox, faces), simplex_boxes6(vbox, edges)
    lo, hi = bounds(vbox, vbox[:0])
    axis = sweep_axis(lo, hi)
    frame_vf, dense_vf = _frame(vbox, fbox, lo, hi, axis)
    frame_ee, dense_ee = _frame(ebox, ebox[:0], lo, hi, axis)
    none = np.empty((0, 2), np.int64)
    if not (dense_vf and dense_ee):
        return none, none, False
    n_bins = SORT_BINS_PER_BOX * n + 64
    extent = hi[axis] - lo[axis]
    v_order = sweep_order(vbox, axis, (lo[axis], n_bins / extent if extent > 0.0 else 0.0, float(n_bins)))
    v_ids = np.arange(n).reshape((n, 1))
    grid_v = compact_grid(vbox, v_ids, v_obst, n, axis, v_order, frame_vf, MAX_ENTRIES_PER_BOX * n + 64)
    grid_f = compact_grid(fbox, faces, f_obst, n, axis, order_by_lowest_vertex(faces, v_order), frame_vf,
                          MAX_ENTRIES_PER_BOX * faces.shape[0] + 64)
    grid_e = compact_grid(ebox, edges, e_obst, n, axis, order_by_lowest_vertex(edges, v_order), frame_ee,
                          MAX_ENTRIES_PER_BOX * edges.shape[0] + 64)
    if grid_v[0].shape[0] == 0 or grid_f[0].shape[0] == 0 or grid_e[0].shape[0] == 0:
        return none, none, False
    vf = joined_pairs(grid_v, grid_f, False, n, guess_vf, n)
    ee = joined_pairs(grid_e, grid_e, True, n, guess_ee, edges.shape[0])
    return vf, ee, True


def mesh_pairs(vbox: np.ndarray, faces: np.ndarray, edges: np.ndarray, v_obst: np.ndarray, f_obst: np.ndarray,
               e_obst: np.ndarray):
    """(vf, ee) of ``mesh_join_pairs`` (arguments as there, contiguous, no face or edge set empty), the buffers
    sized by ``cell_join.pair_guess``; None when the boxes do not fit compact columns."""
    nv, nf, ne = len(vbox), len(faces), len(edges)
    vf, ee, ok = mesh_join_pairs(vbox, faces, edges, v_obst, f_obst, e_obst, pair_guess(nv, nf, False),
                                 pair_guess(ne, ne, True))
    if not ok:
        return None
    remember_pairs(nv, nf, False, len(vf))
    remember_pairs(ne, ne, True, len(ee))
    return vf, ee
