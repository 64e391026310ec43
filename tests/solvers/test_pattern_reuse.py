"""H_ff's pattern kept across steps (``reduction.PatternCache.grown``: a repeated list of missed entries on the same
parent takes the pattern grown before) and a constant node-coordinate term gathered into it
(``reduction._full_term_gather``): both give the bits of the plain path."""

import numpy as np
import scipy.sparse as sp

from ipcsim.solvers import reduction
from ipcsim.solvers.reduction import GROWN_KEPT, FreePattern, PatternCache
from test_elastic_assembly import _newton_matrix, _rel  # the same folder


def test_a_repeated_growth_takes_the_pattern_grown_before(rng):
    solver, hess, free = _newton_matrix(rng, True)
    cache = solver.patterns
    a = hess.free_block(free)                 # from the base pattern: misses the contact entries and grows
    grown = cache.pattern
    assert grown is not cache.base and grown.growths == 1
    cache.clear()                             # a new step: back to the base pattern
    b = hess.free_block(free)                 # the same misses on the same parent: the same object
    assert cache.pattern is grown and b.indices is a.indices
    assert np.array_equal(a.data, b.data)
    fresh, miss = hess._fill(grown)           # and the data of filling it afresh, bit for bit
    assert miss is None and np.array_equal(b.data, fresh)
    assert _rel(b, hess.tocsr()[free][:, free]) <= 1e-12


def test_the_kept_patterns_are_keyed_by_parent_and_entries_and_bounded(rng):
    solver, hess, free = _newton_matrix(rng, False)
    e = hess.elastic
    base = FreePattern(e.indptr, e.indices, free)
    other = FreePattern(e.indptr, e.indices, free)
    cache = PatternCache()
    nf = base.n_free
    lists = [(rng.integers(0, nf, 40), rng.integers(0, nf, 40)) for _ in range(GROWN_KEPT + 1)]
    first = cache.grown(base, *lists[0])
    assert cache.grown(base, lists[0][0].copy(), lists[0][1].copy()) is first  # equal lists, other arrays
    assert cache.grown(other, *lists[0]) is not first                         # another parent
    assert cache.grown(base, *lists[1]) is not first                          # other entries
    ref = FreePattern(e.indptr, e.indices, free, *lists[0])
    assert np.array_equal(first.indices, ref.indices) and np.array_equal(first.indptr, ref.indptr)
    for rows, cols in lists[1:]:
        cache.grown(base, rows, cols)
    assert len(cache._grown) == GROWN_KEPT
    assert cache.grown(base, *lists[0]) is not first                          # the oldest went first


def _mass_like(free, n3, rng):
    """A symmetric (3n, 3n) CSR on a few 3x3 diagonal blocks of free nodes (inside the elastic pattern), int64
    indices (SciPy's constructor converts them to new int32 arrays at every call, as for the model's mass)."""
    nodes = np.flatnonzero(free.reshape(-1, 3).all(axis=1))[::5]
    rows, cols, vals = [], [], []
    for v in nodes:
        blk = rng.normal(size=(3, 3))
        blk = blk @ blk.T + 3 * np.eye(3)
        r = 3 * v + np.arange(3)
        rows.append(np.repeat(r, 3))
        cols.append(np.tile(r, 3))
        vals.append(blk.ravel())
    m = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n3, n3))
    m.indices, m.indptr = m.indices.astype(np.int64), m.indptr.astype(np.int64)
    return m


def test_a_constant_node_term_is_gathered_bit_for_bit(rng, monkeypatch):
    solver, hess, free = _newton_matrix(rng, True)
    mass = _mass_like(free, hess.shape[0], rng)
    hess.add_full(0.7, mass)
    hess.free_block(free)                     # grows the base pattern by the contact entries
    a = hess.free_block(free)                 # fills the grown pattern itself
    pat = solver.patterns.pattern
    assert len(pat._full_gathers) == 1 and pat._full_gathers[0][2] is not None  # inside the pattern: a map
    for _ in range(2):  # new wrappers with new index arrays (as every Newton matrix's): found by their pattern
        assert reduction._full_term_gather(pat, sp.csr_matrix(mass)) is pat._full_gathers[0][2]
    assert len(pat._full_gathers) == 1
    monkeypatch.setattr(reduction, "_full_term_gather", lambda pat, h: None)  # the row-by-row scatter instead
    scattered, miss = hess._fill(pat)
    assert miss is None and np.array_equal(a.data, scattered)
    assert _rel(a, hess.tocsr()[free][:, free]) <= 1e-12


def test_a_node_term_outside_the_pattern_is_scattered(rng):
    solver, hess, free = _newton_matrix(rng, False)
    i, j = np.flatnonzero(free)[[0, -1]]      # two free coordinates far apart: no elastic entry between them
    extra = sp.csr_matrix(([2.0, 0.5, 0.5, 2.0], ([i, i, j, j], [i, j, i, j])), shape=hess.shape)
    hess.add_full(1.0, extra)
    a = hess.free_block(free)
    assert reduction._full_term_gather(solver.patterns.base, hess.full_terms[0][1]) is None
    assert _rel(a, hess.tocsr()[free][:, free]) <= 1e-12
