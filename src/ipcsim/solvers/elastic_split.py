"""The elastic assembly of a model of several bodies in two serial halves, one on each of two threads.

On machines with fewer than 4 cores the elastic derivatives of models under ``elastic.SERIAL_BELOW_TETS`` tets run
on one thread, because a Numba parallel region stalls whenever another process holds the second core (see
``elastic.SERIAL_BELOW_TETS`` and ``runtime.threads``). The tets of different bodies (more precisely, of different
connected components of the tet mesh) share no vertex, so two groups of bodies can be assembled side by side
without ever adding into the same entry: this thread takes one group, ``runtime.threads.helper_thread`` the other
(``runtime.threads.beside``: when the helper cannot start, this thread does both, one after the other).

The bits are those of the one-thread pass (``elastic._assemble``), which walks the chunks phase by phase and adds
each tet's terms in tet order:

* each group walks the same (phase, chunk, tet) sequence restricted to its own tets, so every vertex (which lies in
  one group) receives its additions in the same order;
* a chunk holding tets of both groups is cut into runs of one group; the run that starts the chunk returns its
  energy sum, the later runs store each tet's energy (``tet_energy``) and the chunk's sum continues over them in
  tet order once both halves are done (``_chunk_sums``), so each chunk's energy is the one-thread sum;
* the chunks' sums are added in chunk order, as ``_assemble`` adds them.

The energy-only pass of the line search's trials takes the same plan (``elastic._energy_runs``: each group's runs,
their sums and tet energies, then the same chunk sums), so its bits are those of the one-thread ``elastic._energy``.

A plan exists when both groups hold at least ``MIN_GROUP_TETS`` tets. Measured on the 2-core machine: the plate rack's
two fingers (2,494 tets each) 2.48 -> 1.30 ms a call; the teddy grasp in full space (the teddy's 1,207 tets against the
bubbles' 424) 0.79 -> 0.78 ms, nothing worth a plan.
"""
from __future__ import annotations

import numpy as np
from numba import njit
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from ..runtime.threads import beside

#: Fewest tets in each of the two groups for a split plan (see the module doc).
MIN_GROUP_TETS = 512


class SplitPlan:
    """The two groups' work of an assembly over tets (m, 4) cut into chunks and phases (``elastic._chunk_phases``).

    Attributes:
        items: two (k, 3) int64 arrays, the (chunk, lo, hi) tet runs of each group in (phase, chunk, tet) order;
        first: two (k,) bool arrays, whether a run starts its chunk (it returns the chunk's energy sum so far);
        tails: (t, 3) int64 (chunk, lo, hi) of the runs that do not start their chunk, by chunk then lo;
        n_chunks: the number of chunks; sizes: the tets of each group.
    """

    def __init__(self, items, first, tails, n_chunks, sizes):
        self.items, self.first, self.tails, self.n_chunks, self.sizes = items, first, tails, n_chunks, sizes


def _component_groups(tets: np.ndarray, n_vertices: int) -> np.ndarray:
    """(m,) int64 group 0 or 1 of each tet: the connected components of the tet mesh, largest first, each put in
    the group with fewer tets so far."""
    m = len(tets)
    rows = np.repeat(np.arange(m), 4)
    # tets and vertices as one bipartite graph: tet i is node i, vertex v is node m + v
    both = csr_matrix((np.ones(8 * m, np.int8), (np.r_[rows, tets.ravel() + m], np.r_[tets.ravel() + m, rows])),
                      shape=(m + n_vertices, m + n_vertices))
    _, label = connected_components(both, directed=False)
    comp = label[:m]
    sizes = np.bincount(comp)
    group_of = np.zeros(len(sizes), np.int64)
    load = [0, 0]
    for c in np.argsort(-sizes, kind="stable"):
        g = 0 if load[0] <= load[1] else 1
        group_of[c] = g
        load[g] += int(sizes[c])
    return group_of[comp]


def split_plan(tets: np.ndarray, n_vertices: int, chunk_bounds: np.ndarray, phase_chunks: np.ndarray
               ) -> SplitPlan | None:
    """The ``SplitPlan`` of the tets (m, 4) int64 in assembly order with the chunk bounds and the phase-ordered
    chunks of ``elastic._chunk_phases``, or None when one group would hold fewer than ``MIN_GROUP_TETS`` tets."""
    if len(tets) < 2 * MIN_GROUP_TETS:
        return None
    group = _component_groups(tets, n_vertices)
    sizes = np.bincount(group, minlength=2)
    if sizes.min() < MIN_GROUP_TETS:
        return None
    items, first, tails = ([], []), ([], []), []
    for k in range(len(phase_chunks)):  # phases in order, chunks ascending within each
        c = int(phase_chunks[k])
        lo, hi = int(chunk_bounds[c]), int(chunk_bounds[c + 1])
        cuts = lo + np.flatnonzero(np.diff(group[lo:hi])) + 1
        for a, b in zip(np.r_[lo, cuts], np.r_[cuts, hi]):
            g = int(group[a])
            items[g].append((c, int(a), int(b)))
            first[g].append(a == lo)
            if a != lo:
                tails.append((c, int(a), int(b)))
    as_items = tuple(np.array(i, np.int64).reshape(-1, 3) for i in items)
    tails = np.array(sorted(tails), np.int64).reshape(-1, 3)
    return SplitPlan(as_items, tuple(np.array(f, bool) for f in first), tails, len(chunk_bounds) - 1,
                     tuple(int(s) for s in sizes))


def sum_split(kernel, plan: SplitPlan, arrays: tuple, outputs: tuple) -> float:
    """Psi [J], the bits of the one-thread ``elastic._assemble`` (or ``elastic._energy``), from the two groups of
    ``plan`` side by side (``runtime.threads.beside``); outputs (zeros) += the sums over all tets.

    kernel: ``elastic._assemble_runs`` (outputs: grad_out, data_out) or ``elastic._energy_runs`` (outputs: ());
    arrays: the tet data (codes, x, tets, dm_inv, volume, mu, lam, and for the assembly blk_off, indptr) it takes
    before the runs."""
    m = len(arrays[2])
    tet_energy = np.empty(m)
    totals = (np.empty(len(plan.items[0])), np.empty(len(plan.items[1])))

    def run(g):
        return lambda: kernel(*arrays, plan.items[g], totals[g], tet_energy, *outputs)

    beside(run(0), run(1))
    partial = np.zeros(plan.n_chunks)
    for g in (0, 1):
        starts = plan.first[g]
        partial[plan.items[g][starts, 0]] = totals[g][starts]
    return float(_chunk_sums(partial, plan.tails, tet_energy))


@njit(cache=True)
def _chunk_sums(partial, tails, tet_energy) -> float:
    """Psi [J]: each chunk's sum continued over its later runs' tet energies in tet order, then the chunks' sums
    added in chunk order (the additions of ``elastic._assemble``)."""
    for i in range(tails.shape[0]):
        c = tails[i, 0]
        for e in range(tails[i, 1], tails[i, 2]):
            partial[c] += tet_energy[e]
    total = 0.0
    for c in range(len(partial)):
        total += partial[c]
    return total
