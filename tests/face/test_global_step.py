"""The global-step solvers of 000 §3 (direct, PCG preconditioned by K's factor, Schur complement on x2, Woodbury
update on the touched vertices) solve (K (x) I_3 + B) p = r alike: random sparse SPD K, random x2, random
rank-deficient PSD contact blocks B (like barrier stencils: rank 5 of 12) of small to very large stiffness."""
import numpy as np
import pytest
import scipy.sparse as sp

from ipcsim.face.global_step import SOLVERS, make_global_solver, touched_vertices
from ipcsim.linalg.factorization import available_backends

NAMES = list(SOLVERS)


def _random_k(rng, n):
    """A sparse SPD scalar matrix like the PD one: a weighted graph Laplacian (random sparse graph) plus a small
    diagonal (the eliminated bone coupling)."""
    a = sp.random(n, n, density=6.0 / n, random_state=np.random.RandomState(rng.integers(1 << 31)),
                  data_rvs=lambda k: rng.uniform(0.1, 2.0, k))
    a = sp.triu(a, 1)
    a = a + a.T
    lap = sp.diags(np.asarray(a.sum(axis=1)).ravel()) - a
    return (lap + sp.diags(rng.uniform(1e-3, 1e-1, n))).tocsr()


def _random_contacts(rng, n, support, count, scale, rank=5):
    """B (3n, 3n) CSR PSD: count stencils of 4 vertices drawn from support, each a rank-`rank` PSD 12x12 block
    times scale."""
    rows, cols, vals = [], [], []
    for _ in range(count):
        v = rng.choice(support, 4, replace=False)
        d = (3 * v[:, None] + np.arange(3)).ravel()
        q = rng.standard_normal((12, rank))
        blk = scale * (q @ q.T)
        rows.append(np.repeat(d, 12))
        cols.append(np.tile(d, 12))
        vals.append(blk.ravel())
    b = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(3 * n, 3 * n))
    b.sum_duplicates()
    return b


def _reference(k, b, r):
    a = np.kron(k.toarray(), np.eye(3)) + (b.toarray() if b is not None else 0.0)
    return np.linalg.solve(a, r.ravel()).reshape(-1, 3)


@pytest.mark.parametrize("scale", [1e-2, 1.0, 1e3, 1e6])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_all_solvers_give_the_same_step(scale, seed):
    rng = np.random.default_rng(seed)
    n = 240
    k = _random_k(rng, n)
    x2 = rng.choice(n, 50, replace=False)
    solvers = {name: make_global_solver(name).prepare(k, x2) for name in NAMES}
    for count in (1, 3, 12):  # low-rank updates of growing rank, all on x2
        b = _random_contacts(rng, n, x2, count, scale)
        r = rng.standard_normal((n, 3))
        ref = _reference(k, b, r)
        touched = touched_vertices(b)
        for name, s in solvers.items():
            p = s.solve(b, r)
            err = np.linalg.norm(p - ref) / np.linalg.norm(ref)
            # measured against the dense reference (itself ill-conditioned at scale 1e6): direct 2.4e-10,
            # pcg 3.1e-10 (<= 148 iterations), schur 3.1e-10, woodbury 6.0e-10
            assert err < 1e-8, (name, count, err)
            assert s.last_nc == len(touched)
            assert s.fallbacks == 0
        assert solvers["schur"].n1 == n - 50 and solvers["schur"].n2 == 50


def test_without_contact_every_solver_is_the_constant_factor(rng):
    n = 120
    k = _random_k(rng, n)
    r = rng.standard_normal((n, 3))
    ref = _reference(k, None, r)
    for name in NAMES:
        s = make_global_solver(name).prepare(k, np.arange(10, 40))
        for b in (None, sp.csr_matrix((3 * n, 3 * n))):
            np.testing.assert_allclose(s.solve(b, r), ref, rtol=1e-10, atol=1e-12 * np.abs(ref).max())
            assert s.last_nc == 0


@pytest.mark.parametrize("name", ["schur", "woodbury"])
def test_contact_outside_x2_falls_back_to_the_exact_solve(rng, name):
    n = 150
    k = _random_k(rng, n)
    x2 = np.arange(30)
    s = make_global_solver(name).prepare(k, x2)
    b = _random_contacts(rng, n, np.arange(25, 40), 3, 1e3)  # reaches x1 vertices 30..39
    r = rng.standard_normal((n, 3))
    p = s.solve(b, r)
    ref = _reference(k, b, r)
    assert np.linalg.norm(p - ref) / np.linalg.norm(ref) < 1e-10
    assert s.fallbacks == 1


def test_woodbury_handles_a_rank_deficient_update_that_the_inverse_form_cannot(rng):
    """000 Eq. 11 as written needs B_c^-1; a single barrier stencil's block is singular (rank 5 of 12), the
    I + B_c U^T Sigma^-1 U form is not."""
    n = 80
    k = _random_k(rng, n)
    b = _random_contacts(rng, n, np.arange(20), 1, 1e4)
    d = (3 * touched_vertices(b)[:, None] + np.arange(3)).ravel()
    assert np.linalg.matrix_rank(b[d][:, d].toarray()) == 5
    s = make_global_solver("woodbury").prepare(k, np.arange(20))
    r = rng.standard_normal((n, 3))
    ref = _reference(k, b, r)
    assert np.linalg.norm(s.solve(b, r) - ref) / np.linalg.norm(ref) < 1e-10


def test_pcg_counts_iterations_and_stops_at_its_tolerance(rng):
    n = 200
    k = _random_k(rng, n)
    b = _random_contacts(rng, n, np.arange(n), 10, 1e4)
    r = rng.standard_normal((n, 3))
    ref = _reference(k, b, r)
    loose = make_global_solver("pcg", rtol=1e-3).prepare(k)
    tight = make_global_solver("pcg", rtol=1e-12).prepare(k)
    e_loose = np.linalg.norm(loose.solve(b, r) - ref) / np.linalg.norm(ref)
    e_tight = np.linalg.norm(tight.solve(b, r) - ref) / np.linalg.norm(ref)
    assert tight.iterations > loose.iterations >= 1
    assert e_tight < 1e-9 < e_loose


def test_bad_inputs():
    with pytest.raises(ValueError, match="unknown global-step solver"):
        make_global_solver("lu")
    k = sp.identity(5, format="csr")
    with pytest.raises(ValueError, match="x2"):
        make_global_solver("schur").prepare(k, [7])
    with pytest.raises(ValueError, match="empty"):
        make_global_solver("schur").prepare(k, [])


@pytest.mark.skipif("pardiso" not in available_backends(), reason="pypardiso not installed")
def test_000_triangular_split_gives_the_two_solves_step(small_face):
    """benchmarks/face_schur_split.py: 000 Eq. 7's forward / dense / backward split with M = L^-1 P K12 gives
    the woodbury step's condensed right-hand side and p1, and K22 - M^T M is its S."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the benchmark loader
    from _benchmarks import load_benchmark
    from ipcsim.face import FacePDSolver

    bench = load_benchmark("face_schur_split")
    g = FacePDSolver(small_face, "woodbury").solver
    k11 = g.k[g.x1][:, g.x1].tocsr()
    k11.sort_indices()
    f, m = bench.split_factor(k11, g.k12)
    assert 0 < m.nnz < g.n1 * g.n2
    s = g.k[g.x2][:, g.x2].toarray() - (m.T @ m).toarray()
    assert np.abs(s - g.s).max() < 1e-13 * np.abs(g.s).max()
    rng = np.random.default_rng(3)
    r1, r2, p2 = rng.normal(size=(g.n1, 3)), rng.normal(size=(g.n2, 3)), rng.normal(size=(g.n2, 3))
    for a, b in zip(bench.two_solves(f, g.k12, g.k21, r1, r2, p2),
                    bench.triangular_split(f, m, m.T.tocsr(), r1, r2, p2)):
        assert np.abs(a - b).max() < 1e-13 * np.abs(a).max()
