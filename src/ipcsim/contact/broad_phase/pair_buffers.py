"""Pair lists of the cell join (``cell_join.py``): the direct tests of the overflow boxes and the final
sort of the packed pairs (i << 32) | j."""
from __future__ import annotations

import numpy as np

from ...runtime.jit import generic_njit
from .boxes import boxes_meet



@generic_njit
def scan_pairs(q_ids, e_ids, q_data, e_data, self_query, out, out0, cap):
    """Every (q, e) of the id lists q_ids x e_ids tested directly (for the overflow boxes).

    q_data, e_data: (box (n, 6) [m], verts (n, k) int64, obst (n,) bool) of all queries / elements.
    Self mode: pairs with q == e are skipped and pairs come out [smaller, larger] (the caller makes
    sure that each unordered pair is scanned once). Output as in ``cell_join.join_buckets``."""
    qb, qv, qo = q_data
    eb, ev, eo = e_data
    n = 0
    for s in range(q_ids.shape[0]):
        i = q_ids[s]
        for t in range(e_ids.shape[0]):
            j = e_ids[t]
            if self_query and i == j:
                continue
            if not boxes_meet(qb, i, eb, j):
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


@generic_njit
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


@generic_njit
def ids_not_in(n, ids):
    """(n - len(ids),) int64: 0 .. n - 1 without ``ids`` (sorted)."""
    keep = np.ones(n, np.bool_)
    for t in range(ids.shape[0]):
        keep[ids[t]] = False
    return np.flatnonzero(keep).astype(np.int64)


@generic_njit
def overflow_pairs(over_q, over_e, q_data, e_data, self_query, out, out0, cap):
    """The pairs with an overflow box, tested directly. Returns the count."""
    nq, ne = q_data[0].shape[0], e_data[0].shape[0]
    n = 0
    if self_query:
        if over_q.shape[0]:
            n += scan_pairs(over_q, ids_not_in(nq, over_q), q_data, e_data, True, out, out0 + n, max(cap - n, 0))
            for s in range(over_q.shape[0] - 1):
                n += scan_pairs(over_q[s:s + 1], over_q[s + 1:], q_data, e_data, True, out, out0 + n,
                                max(cap - n, 0))
    else:
        if over_q.shape[0]:
            n += scan_pairs(over_q, np.arange(ne), q_data, e_data, False, out, out0 + n, max(cap - n, 0))
        if over_e.shape[0]:
            n += scan_pairs(ids_not_in(nq, over_q), over_e, q_data, e_data, False, out, out0 + n,
                            max(cap - n, 0))
    return n
