"""Merging of ``build_collisions``: records of the same stencil become one stencil with their weights summed.

Keys follow ipc-toolkit 1.6.1 exactly, for parity: vertex-vertex pairs unordered, edge-vertex (edge, vertex),
edge-edge (unordered edge pair, distance type). Note the edge-edge quirk this reproduces: the type refers to
the stored edge order, so (ea, eb, t) and (eb, ea, t) (two different distances when t is not symmetric) are
merged into the first one found, and (ea, eb, t) and (eb, ea, swap(t)) (the same distance) stay two stencils.
Only the improved max approximator's negative edge-edge terms can meet this; the first record wins the
orientation. Stencils whose summed weight is zero are dropped; the result is ordered by kind.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..collisions_data import EE, EV, FV, VV


@njit(cache=True)
def stable_argsort(key, perm, key2, perm2):
    """Sort the non-negative int64 ``key`` (n,) ascending, stably, by an LSD radix sort on 11-bit digits (digits
    all keys share are skipped); perm (n,) holds the order (the permutation of np.argsort(kind="mergesort"),
    5x faster: 146k stencil keys, 1.8 ms against 10.2 ms). key2, perm2: (n,) scratch. Returns (key, perm),
    either the arrays passed in or the scratch ones."""
    n = key.shape[0]
    for j in range(n):
        perm[j] = j
    cnt = np.empty(2049, np.int64)
    for shift in range(0, 63, 11):
        cnt[:] = 0
        for j in range(n):
            cnt[((key[j] >> shift) & 2047) + 1] += 1
        if cnt.max() == n:
            continue  # one digit value for all keys: the order stays
        for b in range(2048):
            cnt[b + 1] += cnt[b]
        for j in range(n):
            d = (key[j] >> shift) & 2047
            perm2[cnt[d]] = perm[j]
            key2[cnt[d]] = key[j]
            cnt[d] += 1
        perm, perm2 = perm2, perm
        key, key2 = key2, key
    return key, perm


@njit(cache=True)
def _sorted_keys(rk, ri, rd, n_vertices, n_edges, work):
    """(keys, order) of the active records: keys (m,) int64 = kind * 2^52 + stencil key, sorted stably (the first
    record of a group, in record order, gives the stencil's orientation); order (m,) the record ids in that
    order. Both are views of work (5, len(rk)) int64 scratch."""
    n = 0
    for r in range(len(rk)):
        if rk[r] >= 0:
            work[0, n] = r
            n += 1
    active = work[0, :n]
    keys = work[1, :n]
    for j in range(n):
        r = active[j]
        k = rk[r]
        i0, i1 = ri[r, 0], ri[r, 1]
        if k == VV:
            lo, hi = (i0, i1) if i0 < i1 else (i1, i0)
            key = lo * n_vertices + hi
        elif k == EV:
            key = i0 * n_vertices + i1
        elif k == EE:
            lo, hi = (i0, i1) if i0 < i1 else (i1, i0)
            key = (lo * n_edges + hi) * 16 + rd[r]
        else:
            key = r  # FV and PV are never merged
        keys[j] = (k << 52) + key
    keys, perm = stable_argsort(keys, work[2, :n], work[3, :n], work[4, :n])
    for j in range(n):
        perm[j] = active[perm[j]]  # record ids in merge order (active is not read again)
    return keys, perm


@njit(cache=True, inline="always")
def _group_weight(order, keys, rw, j):
    """(summed weight, end) of the group of equal keys starting at sorted position j (records order[j:end])."""
    w = rw[order[j]]
    end = j + 1
    while end < len(keys) and keys[end] == keys[j]:
        w += rw[order[end]]
        end += 1
    return w, end


@njit(cache=True, inline="always")
def _stencil_vertices(k, i0, i1, edges, faces, out_vert, m):
    """Row m of out_vert (n, 4): the stencil's vertex ids in the order of ``collisions_data``, from its primitive
    ids (i0, i1) (``records``); edges (n_edges, 2), faces (n_faces, 3) int64. Rows start filled with -1."""
    if k == VV:
        out_vert[m, 0] = i0
        out_vert[m, 1] = i1
    elif k == EV:
        out_vert[m, 0] = i1
        out_vert[m, 1] = edges[i0, 0]
        out_vert[m, 2] = edges[i0, 1]
    elif k == EE:
        out_vert[m, 0] = edges[i0, 0]
        out_vert[m, 1] = edges[i0, 1]
        out_vert[m, 2] = edges[i1, 0]
        out_vert[m, 3] = edges[i1, 1]
    elif k == FV:
        out_vert[m, 0] = i1
        out_vert[m, 1] = faces[i0, 0]
        out_vert[m, 2] = faces[i0, 1]
        out_vert[m, 3] = faces[i0, 2]
    else:
        out_vert[m, 0] = i1


@njit(cache=True)
def merge(rk, ri, rd, rw, re, edges, faces, n_vertices, n_edges, work):
    """Merge the records (``records``) of the same stencil (module docstring). work: (5, len(rk)) int64 scratch.

    Returns the (kind, vertices, primitives, dtype, eps_x, weight) arrays of the ``Collisions`` container.
    """
    keys, order = _sorted_keys(rk, ri, rd, n_vertices, n_edges, work)
    n = len(keys)
    valid = 0  # stencils with a nonzero total weight
    j = 0
    while j < n:
        w, j = _group_weight(order, keys, rw, j)
        if w != 0.0:
            valid += 1
    out_kind = np.empty(valid, np.int64)
    out_vert = np.full((valid, 4), -1, np.int64)
    out_prim = np.empty((valid, 2), np.int64)
    out_dtype = np.full(valid, -1, np.int64)
    out_eps = np.zeros(valid, np.float64)
    out_w = np.empty(valid, np.float64)
    m = 0
    j = 0
    while j < n:
        r = order[j]
        w, j = _group_weight(order, keys, rw, j)
        if w == 0.0:
            continue
        k = rk[r]
        out_kind[m] = k
        out_prim[m, 0] = ri[r, 0]
        out_prim[m, 1] = ri[r, 1]
        out_w[m] = w
        _stencil_vertices(k, ri[r, 0], ri[r, 1], edges, faces, out_vert, m)
        if k == EE:
            out_dtype[m] = rd[r]
            out_eps[m] = re[r]
        m += 1
    return out_kind, out_vert, out_prim, out_dtype, out_eps, out_w
