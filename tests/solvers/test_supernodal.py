"""The supernodal Cholesky (``linalg.supernodal``): its symbolic structure is the exact pattern of L, its
supernodes are fundamental, its factor is LAPACK's Cholesky of P A P^T, the analysis is kept exactly while the
pattern and the ordering are the same, and a matrix that is not positive definite is reported."""

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph

from ipcsim.linalg import supernodal as sn
from ipcsim.linalg.factorization import Factorization, compute_ordering, pardiso_available
from ipcsim.linalg.supernodal import SupernodalCholesky

from _benchmarks import load_benchmark
from test_linear import _block_spd  # the same folder


def _orderings(rng, a):
    """Named zero-based orderings of a: identity, random, reverse Cuthill-McKee, MKL's (where installed)."""
    n = a.shape[0]
    out = {"identity": np.arange(n), "random": rng.permutation(n),
           "rcm": np.asarray(csgraph.reverse_cuthill_mckee(a, symmetric_mode=True), np.int64)}
    if pardiso_available():
        out["mkl"] = np.asarray(compute_ordering(a)[0], np.int64) - 1
    return out


def _dense_factor(c: SupernodalCholesky) -> np.ndarray:
    """The dense L (n, n) of the permuted matrix from the supernodal blocks."""
    src, colptr, rows, lp, li, first, offset, *_ = c._sym
    n = len(colptr) - 1
    lp, li, first, offset = (np.asarray(v, np.int64) for v in (lp, li, first, offset))
    out = np.zeros((n, n))
    for s in range(len(first) - 1):
        f, e = first[s], first[s + 1]
        r = li[lp[f]:lp[f + 1]]
        block = c._lx[offset[s]:offset[s + 1]].reshape(e - f, len(r)).T
        for k in range(e - f):
            out[r[k:], f + k] = block[k:, k]
    return out


@pytest.mark.parametrize("shape", ["scattered", "mesh"])
def test_factor_is_lapacks_cholesky_of_the_permuted_matrix_under_any_ordering(rng, shape):
    a = _block_spd(rng, 60, 90, spread=None if shape == "scattered" else 8)
    for name, perm in _orderings(rng, a).items():
        c = SupernodalCholesky()
        assert c.factor(a, perm), name
        reference = np.linalg.cholesky(a.toarray()[np.ix_(perm, perm)])
        assert np.abs(_dense_factor(c) - reference).max() < 1e-12 * np.abs(reference).max(), name
        b = rng.normal(size=(a.shape[0], 3))
        x = c.solve(b)
        assert np.linalg.norm(a @ x - b) < 1e-12 * np.linalg.norm(b), name
        np.testing.assert_array_equal(c.solve(b[:, 1]), x[:, 1])


def test_symbolic_structure_is_exactly_the_pattern_of_l(rng):
    """L's column structures (rows, diagonal first) equal the nonzeros of the dense Cholesky factor (random values:
    no cancellation), and every supernode's columns share the first column's structure below them."""
    a = _block_spd(rng, 50, 70, spread=10)
    perm = _orderings(rng, a)["rcm"]
    c = SupernodalCholesky()
    c.factor(a, perm)
    src, colptr, rows, lp, li, first, offset, *_ = (np.asarray(v, np.int64) for v in c._sym)
    dense = np.linalg.cholesky(a.toarray()[np.ix_(perm, perm)])
    n = a.shape[0]
    for s in range(len(first) - 1):
        f, e = first[s], first[s + 1]
        r = li[lp[f]:lp[f + 1]]
        assert list(r[:e - f]) == list(range(f, e))  # the diagonal block is dense
        for k in range(e - f):
            nonzero = np.flatnonzero(np.abs(dense[:, f + k]) > 1e-300)
            np.testing.assert_array_equal(nonzero, r[k:])
    # fundamental: a supernode ends where the next column's structure is not its parent's minus one row
    parent = sn._etree(*sn._upper_rows(colptr, rows, n), n)
    counts = np.diff(lp)
    starts = set(first[:-1].tolist())
    for j in range(1, n):
        joins = parent[j - 1] == j and counts[j - 1] == counts[j] + 1
        assert (j not in starts) == joins


@pytest.mark.parametrize("case", ["one row", "diagonal", "dense", "two blocks"])
def test_degenerate_patterns(rng, case):
    if case == "one row":
        a = sp.csr_matrix(np.array([[4.0]]))
    elif case == "diagonal":  # every column its own supernode, no updates
        a = sp.diags(rng.uniform(1.0, 2.0, 30)).tocsr()
    elif case == "dense":  # one supernode
        g = rng.normal(size=(25, 25))
        a = sp.csr_matrix(g @ g.T + 25.0 * np.eye(25))
    else:  # a forest: two unconnected blocks
        b1, b2 = _block_spd(rng, 10, 12), _block_spd(rng, 12, 15)
        a = sp.block_diag([b1, b2]).tocsr()
    a.sort_indices()
    c = SupernodalCholesky()
    perm = rng.permutation(a.shape[0])
    assert c.factor(a, perm)
    b = rng.normal(size=a.shape[0])
    assert np.linalg.norm(a @ c.solve(b) - b) < 1e-12 * np.linalg.norm(b)
    if case == "dense":
        assert len(c._sym[5]) == 2  # first = [0, n]: one supernode


def test_the_analysis_is_kept_for_the_same_pattern_and_ordering_only(rng):
    a = _block_spd(rng, 40, 50, spread=8)
    perm = _orderings(rng, a)["rcm"]
    c = SupernodalCholesky()
    b = rng.normal(size=a.shape[0])
    x0 = c.factor(a, perm) and c.solve(b)
    scaled = sp.csr_matrix((2.0 * a.data, a.indices, a.indptr), shape=a.shape)  # the same index objects
    assert c.factor(scaled, perm) and c.analyses == 1
    np.testing.assert_allclose(c.solve(b), 0.5 * x0, rtol=1e-12)
    copy = a.copy()  # equal pattern in other arrays
    assert c.factor(copy, perm.copy()) and c.analyses == 1
    np.testing.assert_array_equal(c.solve(b), x0)
    assert c.factor(a, perm[::-1].copy()) and c.analyses == 2  # another ordering
    grown = (a + sp.csr_matrix(([0.01, 0.01], ([0, 5], [5, 0])), shape=a.shape)).tocsr()
    grown.sort_indices()
    assert c.factor(grown, perm) and c.analyses == 3  # another pattern
    assert np.linalg.norm(grown @ c.solve(b) - b) < 1e-12 * np.linalg.norm(b)
    fresh = SupernodalCholesky()
    fresh.factor(grown, perm)
    np.testing.assert_array_equal(fresh.solve(b), c.solve(b))  # no history in the bits


def test_not_positive_definite_is_reported(rng):
    a = _block_spd(rng, 30, 40)
    ind = (a - 3.0 * abs(a).max() * sp.identity(a.shape[0])).tocsr()
    ind.sort_indices()
    c = SupernodalCholesky()
    assert not c.factor(ind, np.arange(a.shape[0]))
    assert c.factor(a, np.arange(a.shape[0]))  # usable again


def test_factorization_takes_a_given_one_based_ordering_and_keeps_its_analysis(rng):
    a = _block_spd(rng, 50, 70, spread=10)
    perm = _orderings(rng, a)["rcm"]
    f = Factorization("supernodal")
    b = rng.normal(size=a.shape[0])
    ordering = (perm.astype(np.int32) + 1, a.nnz)  # as compute_ordering gives it
    x = f.factor(a, ordering).solve(b)
    assert f.backend == "supernodal" and f.method == "cholesky"
    np.testing.assert_array_equal(f._supernodal._perm, perm)
    f.reset(keep_analysis=True)
    np.testing.assert_array_equal(f.factor(a, ordering).solve(b), x)
    assert f.analyses == 1
    f.reset()
    assert f.factor(a, ordering) and f.analyses == 1  # a new analysis object (its count starts afresh)
    own = Factorization("supernodal").factor(a)  # no ordering: one of its own for this pattern
    assert np.linalg.norm(a @ own.solve(b) - b) < 1e-12 * np.linalg.norm(b)


def test_auto_keeps_the_supernodal_factor_above_its_row_bound_only_where_l_is_sparse(rng):
    """'auto' from ``SUPERNODAL_BELOW`` rows on: a thin strip of nodes (a sparse factor) still goes supernodal, a
    bulky cube of nodes (a dense one) to the first library backend; both solve."""
    from ipcsim.linalg import factorization as linear

    grid_matrix = load_benchmark("bench_factorization").grid_matrix  # the benchmark's node grids
    for shape, sparse_factor in (((200, 4, 1), True), ((10, 10, 10), False)):
        a = grid_matrix(shape)
        assert linear.SUPERNODAL_BELOW <= a.shape[0] < linear.SUPERNODAL_MAX
        f = Factorization("auto")
        b = rng.normal(size=a.shape[0])
        x = f.factor(a).solve(b)
        assert np.linalg.norm(a @ x - b) < 1e-12 * np.linalg.norm(b)
        per_row = f._supernodal.factor_entries / a.shape[0]
        assert (per_row <= linear.SUPERNODAL_ENTRIES_PER_ROW) == sparse_factor, per_row
        assert f.backend == ("supernodal" if sparse_factor else linear.available_backends()[0])


def _two_bodies(rng, n_nodes=500, spread=12, links=6):
    """(a, perm): two mesh-like blocks (n_nodes nodes each) coupled by a few entries across them (the Newton matrix
    of two deformable bodies in contact), big enough for the two-thread factorisation (``SPLIT_MIN_FLOPS``), and a
    dissection of it: each body's other rows in their own order, the coupled rows last."""
    b1, b2 = _block_spd(rng, n_nodes, 3 * n_nodes, spread), _block_spd(rng, n_nodes, 3 * n_nodes, spread)
    a = sp.block_diag([b1, b2]).tolil()
    coupled = []
    for _ in range(links):
        i, j = rng.integers(0, 3 * n_nodes), 3 * n_nodes + rng.integers(0, 3 * n_nodes)
        a[i, j] += 0.1
        a[j, i] += 0.1
        coupled += [i, j]
    a = a.tocsr()
    a.sort_indices()
    last = np.unique(coupled)
    return a, np.concatenate([np.setdiff1d(np.arange(a.shape[0]), last), last])


def test_two_thread_factorisation_splits_whole_subtrees_and_keeps_the_one_thread_bits(rng, monkeypatch):
    """Two bodies: the supernodes fall into two sets of whole subtrees (a supernode's parent is in its own set or
    in the rest, the rest's parents in the rest) of nearly equal work, factorised on two threads: L and the
    solutions are bit for bit those of the one-thread order."""
    from ipcsim.runtime.threads import numba_threads

    a, perm = _two_bodies(rng)
    shared = []
    real_beside = sn.beside
    monkeypatch.setattr(sn, "beside", lambda here, there: shared.append(1) or real_beside(here, there))
    two = SupernodalCholesky()
    assert two.factor(a, perm)
    one, other, rest, every = (np.asarray(v, np.int64) for v in two._parts)
    assert len(one) and len(other) and len(one) + len(other) + len(rest) == len(every)
    label, parent = _labels_and_parents(two)
    for s in range(len(label)):
        if parent[s] >= 0:
            assert label[parent[s]] in (label[s], 2), s
    _, work, _ = sn._supernode_tree(*_tree_arrays(two))
    loads = [work[part].sum() / work.sum() for part in (one, other, rest)]
    assert max(loads[:2]) + loads[2] < 0.55, loads  # 0.502 measured
    assert shared == [1]
    b = rng.normal(size=(a.shape[0], 2))
    x = two.solve(b)
    with numba_threads(1):
        single = SupernodalCholesky()
        assert single.factor(a, perm)
    assert shared == [1]  # the one-thread factorisation did not share
    np.testing.assert_array_equal(two._lx, single._lx)
    np.testing.assert_array_equal(x, single.solve(b))
    assert np.linalg.norm(a @ x - b) < 1e-12 * np.linalg.norm(b)


def _tree_arrays(c: SupernodalCholesky):
    """(etree parent (n,), lp, first, owner) of c's analysed pattern (permuted), int64."""
    src, colptr, rows, lp, li, first, *_ = (np.asarray(v, np.int64) for v in c._sym)
    n = len(colptr) - 1
    rowptr, cols = sn._upper_rows(colptr, rows, n)
    owner = np.repeat(np.arange(len(first) - 1), np.diff(first))
    return sn._etree(rowptr, cols, n), lp, first, owner


def _labels_and_parents(c: SupernodalCholesky):
    """(label (ns,): 0 / 1 for the two threads' sets, 2 for the rest; parent supernode (ns,), -1 at roots, read
    off L's structure: the supernode holding the first row below the diagonal of s's last column)."""
    one, other, rest, every = (np.asarray(v, np.int64) for v in c._parts)
    label = np.full(len(every), -1)
    for k, part in enumerate((one, other, rest)):
        label[part] = k
    assert np.all(label >= 0) and len(one) + len(other) + len(rest) == len(every)
    _, lp, first, owner = _tree_arrays(c)
    li = np.asarray(c._sym[4], np.int64)
    parent = np.full(len(every), -1)
    for s in range(len(every)):
        last = first[s + 1] - 1
        if lp[last + 1] - lp[last] > 1:
            parent[s] = owner[li[lp[last] + 1]]
    return label, parent


@pytest.mark.parametrize("which", [0, 1])
def test_two_thread_factorisation_reports_a_body_that_is_not_positive_definite(rng, which):
    a, perm = _two_bodies(rng)
    half = a.shape[0] // 2
    shift = np.zeros(a.shape[0])
    shift[which * half:(which + 1) * half] = 3.0 * abs(a).max()
    bad = (a - sp.diags(shift)).tocsr()
    bad.sort_indices()
    c = SupernodalCholesky()
    assert not c.factor(bad, perm)
    assert len(c._parts[1])  # it was split
    assert c.factor(a, perm)  # usable again


def test_small_or_lopsided_factorisations_stay_on_one_thread(rng):
    c = SupernodalCholesky()
    a = _block_spd(rng, 60, 90, spread=8)  # too few flops
    assert c.factor(a, np.arange(a.shape[0])) and not len(c._parts[1])
    g = rng.normal(size=(1200, 1200))  # one dense supernode: nothing to share
    dense = sp.csr_matrix(g @ g.T + 1200.0 * np.eye(1200))
    assert c.factor(dense, np.arange(1200)) and not len(c._parts[1])


@pytest.mark.parametrize("spread", [None, 6, 20])
def test_forced_two_thread_split_keeps_the_bits_on_any_tree(rng, monkeypatch, spread):
    """With the size and span bounds lifted, every pattern and ordering (forests, chains, bushy trees) is split
    wherever its tree allows: the sets stay whole subtrees and L is the one-thread factor bit for bit."""
    from ipcsim.runtime.threads import numba_threads

    monkeypatch.setattr(sn, "SPLIT_MIN_FLOPS", 0.0)
    monkeypatch.setattr(sn, "SPLIT_MAX_SPAN", 1.0)
    blocks = [_block_spd(rng, 40, 50, spread=spread) for _ in range(3)]
    split = 0
    for a in (blocks[0], sp.block_diag(blocks).tocsr()):  # one body, and a forest of three
        a.sort_indices()
        for name, perm in _orderings(rng, a).items():
            two = SupernodalCholesky()
            assert two.factor(a, perm), name
            label, parent = _labels_and_parents(two)
            split += int(np.any(label == 1))
            for s in range(len(label)):
                if parent[s] >= 0:
                    assert label[parent[s]] in (label[s], 2), name
            with numba_threads(1):
                single = SupernodalCholesky()
                assert single.factor(a, perm)
            np.testing.assert_array_equal(two._lx, single._lx, err_msg=name)
    assert split >= 6  # every case here splits (6 without MKL's ordering, 8 with it)
