"""O(n^2) reference broad phase: every (query, element) box pair tested, vectorized in chunks."""
from __future__ import annotations

import numpy as np

_CHUNK_PAIRS = 1 << 22  # box pairs tested per NumPy chunk (bounds the temporary memory)


def brute_force_pairs(queries: tuple, elements: tuple, self_query: bool) -> np.ndarray:
    """All (query, element) pairs with overlapping boxes that pass the IPC exclusions.

    Args:
        queries: (lo (nq, 3) [m], hi (nq, 3) [m], vertex ids (nq, kq) int64, obstacle flags (nq,) bool).
        elements: the same for the elements.
        self_query: queries and elements are the same primitives; only pairs q < e are kept.

    Returns:
        (n, 2) int64 [query, element], sorted lexicographically. Excluded: pairs sharing a vertex,
        pairs of two obstacle primitives.
    """
    qlo, qhi, qv, q_obst = queries
    elo, ehi, ev, e_obst = elements
    nq, ne = len(qlo), len(elo)
    if nq == 0 or ne == 0:
        return np.zeros((0, 2), np.int64)
    step = max(1, _CHUNK_PAIRS // ne)
    out = []
    for s in range(0, nq, step):
        q = slice(s, min(nq, s + step))
        e0 = s if self_query else 0  # a self query only needs elements e > q >= s
        hit = np.ones((q.stop - q.start, ne - e0), dtype=bool)
        for a in range(3):
            hit &= qlo[q, a, None] <= ehi[None, e0:, a]
            hit &= elo[None, e0:, a] <= qhi[q, a, None]
        qi, ei = np.nonzero(hit)
        qi = qi + s
        ei = ei + e0
        keep = ~(q_obst[qi] & e_obst[ei])
        if self_query:
            keep &= ei > qi
        qi, ei = qi[keep], ei[keep]
        shared = (qv[qi][:, :, None] == ev[ei][:, None, :]).any(axis=(1, 2))
        out.append(np.stack([qi[~shared], ei[~shared]], axis=1).astype(np.int64))
    return np.concatenate(out, axis=0)
