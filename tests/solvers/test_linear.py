"""Sparse SPD solves: backends agree, pardiso reuses its analysis only for the same pattern object."""

import numpy as np
import pytest
import scipy.sparse as sp

from ipcsim.solvers import linear
from ipcsim.solvers.linear import PardisoSPD, available_backends, solve_spd, upper_triangle_positions

needs_pardiso = pytest.mark.skipif("pardiso" not in available_backends(), reason="pypardiso not installed")


def _spd(rng, n=300, density=0.02, shift=1.0):
    """A random sparse SPD matrix (n, n) as canonical CSR: B B^T + shift I."""
    b = sp.random(n, n, density=density, random_state=rng, format="csr")
    a = (b @ b.T + shift * sp.identity(n)).tocsr()
    a.sum_duplicates()
    return a


def _residual(a, x, b):
    return np.linalg.norm(a @ x - b) / np.linalg.norm(b)


@pytest.mark.parametrize("backend", available_backends() + ["auto"])
def test_backends_solve_spd_systems(rng, backend):
    a = _spd(rng)
    b = rng.normal(size=a.shape[0])
    x = solve_spd(a, b, backend)
    assert _residual(a, x, b) < 1e-12


def test_unknown_backend_is_a_value_error(rng):
    with pytest.raises(ValueError, match="unknown linear-solver backend 'cholmod'"):
        solve_spd(_spd(rng, 10), np.ones(10), "cholmod")


def test_upper_triangle_positions():
    a = sp.csr_matrix(np.array([[4.0, 1.0, 0.0], [1.0, 3.0, 2.0], [0.0, 2.0, 5.0]]))
    pos = upper_triangle_positions(a.indptr, a.indices)
    np.testing.assert_array_equal(a.data[pos], [4.0, 1.0, 3.0, 2.0, 5.0])


@needs_pardiso
def test_pardiso_reuses_the_analysis_for_the_same_pattern_object(rng):
    solver = PardisoSPD()
    a = _spd(rng)
    b = rng.normal(size=a.shape[0])
    assert _residual(a, solver.solve(a, b), b) < 1e-12
    assert (solver.analyses, solver.factorizations) == (1, 1)
    # new SPD values on the same index arrays: numerical factorisation only, and the new solution
    rows = np.repeat(np.arange(a.shape[0]), np.diff(a.indptr))
    data = 2.0 * a.data + np.where(a.indices == rows, rng.uniform(0.5, 2.0, size=a.nnz), 0.0)
    a3 = sp.csr_matrix(a.shape)
    a3.data, a3.indices, a3.indptr = data, a.indices, a.indptr
    a3.has_canonical_format = True
    x3 = solver.solve(a3, b)
    assert (solver.analyses, solver.factorizations) == (1, 2)
    assert _residual(a3, x3, b) < 1e-12
    assert _residual(a, x3, b) > 1e-3  # a different system was solved
    a2 = a3.copy()  # equal pattern, other arrays
    # an equal pattern in other arrays is treated as new (identity is the contract)
    x2 = solver.solve(a2, b)
    assert solver.analyses == 2 and _residual(a2, x2, b) < 1e-12
    # a different size
    a4 = _spd(rng, 120)
    b4 = rng.normal(size=120)
    assert _residual(a4, solver.solve(a4, b4), b4) < 1e-12 and solver.analyses == 3


@needs_pardiso
def test_solve_spd_accepts_duplicates_and_indefinite_falls_back(rng):
    a = _spd(rng, 200)
    coo = a.tocoo()
    dup = sp.csr_matrix((np.concatenate([0.5 * coo.data, 0.5 * coo.data]),
                         (np.concatenate([coo.row, coo.row]), np.concatenate([coo.col, coo.col]))),
                        shape=a.shape)
    dup.has_canonical_format = False
    b = rng.normal(size=200)
    assert _residual(a, solve_spd(dup, b, "pardiso"), b) < 1e-12
    # symmetric indefinite (not SPD): MKL's Cholesky rejects it, the LU fallback still solves it
    ind = (a - 3.0 * sp.identity(200) * abs(a).max()).tocsr()
    ind.sum_duplicates()
    x = linear.pardiso_solver().solve(ind, b)
    assert _residual(ind, x, b) < 1e-10
    assert _residual(a, solve_spd(a, b, "pardiso"), b) < 1e-12  # and the solver keeps working afterwards


@pytest.mark.skipif("cholespy" not in available_backends(), reason="cholespy not installed")
def test_cholespy_backend_falls_back_for_indefinite(rng):
    a = _spd(rng, 100)
    ind = (a - 3.0 * sp.identity(100) * abs(a).max()).tocsr()
    b = rng.normal(size=100)
    assert _residual(ind, solve_spd(ind, b, "cholespy"), b) < 1e-10


@needs_pardiso
def test_pardiso_reuses_the_ordering_when_the_pattern_grows_a_little(rng):
    solver = PardisoSPD()
    a = _spd(rng, 400)
    b = rng.normal(size=400)
    assert _residual(a, solver.solve(a, b), b) < 1e-12
    # new coupling entries (like contact between two bodies): a new pattern of the same size, < 10% larger
    i = rng.choice(400, size=20, replace=False)
    j = rng.choice(400, size=20, replace=False)
    c = sp.csr_matrix((np.full(20, 0.01), (i, j)), shape=a.shape)
    grown = (a + c + c.T + 0.1 * sp.identity(400)).tocsr()
    grown.sum_duplicates()
    assert a.nnz < grown.nnz <= 1.1 * a.nnz
    assert _residual(grown, solver.solve(grown, b), b) < 1e-12
    assert (solver.analyses, solver.ordering_reuses) == (2, 1)
    # much larger growth: a fresh ordering
    dense_rows = sp.random(400, 400, density=0.05, random_state=rng, format="csr")
    big = (a + 1e-3 * (dense_rows @ dense_rows.T)).tocsr()
    big.sum_duplicates()
    assert big.nnz > 1.1 * a.nnz
    assert _residual(big, solver.solve(big, b), b) < 1e-12
    assert (solver.analyses, solver.ordering_reuses) == (3, 1)


@needs_pardiso
def test_pardiso_given_ordering_makes_the_solve_independent_of_earlier_calls(rng):
    a = _spd(rng, 400)
    b = rng.normal(size=400)
    base = PardisoSPD()
    ordering = base.compute_ordering(a)
    assert ordering[0].shape == (400,) and ordering[1] == a.nnz
    assert sorted(ordering[0] - ordering[0].min()) == list(range(400))  # a permutation
    i = rng.choice(400, size=20, replace=False)
    j = rng.choice(400, size=20, replace=False)
    c = sp.csr_matrix((np.full(20, 0.01), (i, j)), shape=a.shape)
    grown = (a + c + c.T).tocsr()
    grown.sum_duplicates()
    other = _spd(rng, 400, density=0.03)
    # one solver that has seen another matrix first, one fresh: the same ordering, the same bits
    s1, s2 = PardisoSPD(), PardisoSPD()
    s1.solve(other, b)
    x1 = s1.solve(grown, b, ordering)
    x2 = s2.solve(grown, b, ordering)
    assert _residual(grown, x1, b) < 1e-12
    assert np.array_equal(x1, x2)
    assert (s1.given_orderings, s2.given_orderings) == (1, 1)
    # an ordering for a much smaller pattern is not used: the analysis computes its own
    dense_rows = sp.random(400, 400, density=0.05, random_state=rng, format="csr")
    big = (a + 1e-3 * (dense_rows @ dense_rows.T)).tocsr()
    big.sum_duplicates()
    assert _residual(big, s2.solve(big, b, ordering), b) < 1e-12
    assert s2.given_orderings == 1 and s2.analyses == 2


def test_upper_triangle_positions_match_a_numpy_reference(rng):
    a = _spd(rng, 200, density=0.05)
    rows = np.repeat(np.arange(200), np.diff(a.indptr))
    np.testing.assert_array_equal(upper_triangle_positions(a.indptr, a.indices), np.flatnonzero(a.indices >= rows))
