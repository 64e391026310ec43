"""The elastic assembly in two serial halves on two threads (``solvers.elastic_split``) for models of several bodies on
machines with fewer than 4 cores: the plan's groups share no vertex and cover every tet once, and the result is
bitwise the one-thread pass, with the helper thread free or busy (``runtime.threads.beside``)."""

import threading

import numba
import numpy as np
import pytest

import ipcsim.solvers.elastic as elastic
import ipcsim.solvers.elastic_split as elastic_split
from ipcsim.model import ModelBuilder, box_tet_mesh
from ipcsim.runtime.threads import beside, helper_thread
from ipcsim.solvers.elastic import _assemble, ElasticAssembler

pytestmark = pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs Numba with 2 threads")


@pytest.fixture
def small_groups(monkeypatch):
    """Plans for small test meshes (groups of 100+ tets) on a '2-core' machine with 2 Numba threads."""
    monkeypatch.setattr(elastic_split, "MIN_GROUP_TETS", 100)
    monkeypatch.setattr(elastic, "cpu_cores", lambda: 2)
    threads = numba.get_num_threads()
    numba.set_num_threads(2)
    yield
    numba.set_num_threads(threads)


def _bodies(rng):
    """Four boxes of different sizes and materials (1,230 tets: three chunks, whose bounds fall inside bodies) and
    deformed positions."""
    b = ModelBuilder()
    for k, (res, name) in enumerate([((3, 4, 3), "LCR"), ((4, 4, 4), "NH"), ((3, 3, 3), "LCR"), ((5, 2, 5), "FCR")]):
        v, t = box_tet_mesh((0.05, 0.05, 0.05), res)
        b.add_body(v, t, translation=(0.1 * k, 0.0, 0.0), material=name, youngs_modulus=1e5 * (k + 1))
    model, st = b.finalize()
    x = st.x * np.array([1.0, 0.8, 1.1]) + 0.001 * rng.standard_normal(st.x.shape)
    return model, x


def _one_thread_pass(term, x):
    """(gradient, Hessian data, Psi) of the serial ``_assemble`` in the assembler's order."""
    pat = term.pattern
    grad, data = np.zeros(3 * pat.n_vertices), np.zeros(pat.nnz)
    psi = _assemble.serial(term._codes, x, term._tets, term._dm_inv, term._volume, term._mu, term._lam, pat.blk_off,
                           pat.indptr, term._chunk_bounds, term._phase_ptr, term._phase_chunks, grad, data)
    return grad, data, psi


def test_plan_groups_share_no_vertex_and_cover_every_tet_once(small_groups, rng):
    model, _ = _bodies(rng)
    term = ElasticAssembler(model)
    plan = term._split_plan()
    assert plan is not None and min(plan.sizes) >= 100 and sum(plan.sizes) == len(term._tets)
    covered = np.zeros(len(term._tets), int)
    verts = []
    for g in (0, 1):
        runs = plan.items[g]
        for c, lo, hi in runs:
            assert term._chunk_bounds[c] <= lo < hi <= term._chunk_bounds[c + 1]
            covered[lo:hi] += 1
        verts.append(set(term._tets[np.concatenate([np.arange(lo, hi) for _, lo, hi in runs])].ravel()))
        # the one-thread pass's order: phases in order, chunks ascending within a phase, runs by tet
        rank = np.empty(plan.n_chunks, int)
        rank[term._phase_chunks] = np.arange(plan.n_chunks)
        keys = [(rank[c], lo) for c, lo, _ in runs]
        assert keys == sorted(keys)
        assert np.array_equal(plan.first[g], runs[:, 1] == term._chunk_bounds[runs[:, 0]])
    assert np.all(covered == 1)
    assert not verts[0] & verts[1]
    later = sorted(tuple(r) for g in (0, 1) for r, f in zip(plan.items[g], plan.first[g]) if not f)
    assert [tuple(t) for t in plan.tails] == later
    straddling = set(plan.items[0][:, 0]) & set(plan.items[1][:, 0])
    assert straddling and len(plan.tails)  # chunks holding tets of both groups: the energies' tail path is used


def test_split_assembly_is_bitwise_the_one_thread_pass(small_groups, rng, monkeypatch):
    model, x = _bodies(rng)
    calls = []
    monkeypatch.setattr(elastic_split, "beside", lambda a, b: calls.append(1) or beside(a, b))
    term = ElasticAssembler(model)
    grad, hess, psi = term.gradient_hessian_energy(x)
    assert calls == [1]
    g0, d0, psi0 = _one_thread_pass(term, x)
    assert np.array_equal(grad, g0) and np.array_equal(hess.data, d0) and psi == psi0
    assert psi == term.energy(x)  # the energy-only pass sums the same terms in the same order


def test_split_energy_is_bitwise_the_one_thread_sum(small_groups, rng, monkeypatch):
    """The energy-only pass (line-search trials) in two halves: the bits of the one-thread ``_energy``, also where a
    neo-Hookean tet is inverted (+inf)."""
    from ipcsim.energies.materials import NH
    from ipcsim.solvers.elastic import _energy

    model, x = _bodies(rng)
    calls = []
    monkeypatch.setattr(elastic_split, "beside", lambda a, b: calls.append(1) or beside(a, b))
    term = ElasticAssembler(model)
    flipped = x.copy()
    a, b_ = term._tets[np.flatnonzero(term._codes == NH)[0], :2]  # two corners of a neo-Hookean tet swapped
    flipped[[a, b_]] = flipped[[b_, a]]
    for y in (x, 1.02 * x, flipped):
        psi = term.energy(y)
        one = _energy.serial(term._codes, y, term._tets, term._dm_inv, term._volume, term._mu, term._lam,
                             term._chunk_bounds)
        assert psi == one or (np.isnan(psi) and np.isnan(one)), (psi, one)
    assert len(calls) == 3
    assert term.energy(flipped) == np.inf and term.energy(x) != term.energy(1.02 * x)


def test_busy_helper_leaves_both_halves_to_the_caller(small_groups, rng):
    model, x = _bodies(rng)
    term = ElasticAssembler(model)
    release = threading.Event()
    blocker = helper_thread().submit(release.wait, 30)
    try:
        grad, hess, psi = term.gradient_hessian_energy(x)
        assert not blocker.done()  # the helper never got to the second half: this thread ran it
    finally:
        release.set()
    g0, d0, psi0 = _one_thread_pass(term, x)
    assert np.array_equal(grad, g0) and np.array_equal(hess.data, d0) and psi == psi0


def test_no_split_for_one_body_or_on_four_cores(small_groups, rng, monkeypatch):
    model, _ = _bodies(rng)
    monkeypatch.setattr(elastic, "cpu_cores", lambda: 4)
    assert ElasticAssembler(model)._split_plan() is None  # the parallel kernel's machines
    monkeypatch.setattr(elastic, "cpu_cores", lambda: 2)
    v, t = box_tet_mesh((0.05, 0.05, 0.05), (5, 5, 5))
    b = ModelBuilder()
    b.add_body(v, t)
    assert ElasticAssembler(b.finalize()[0])._split_plan() is None  # one body: nothing to split


def test_beside_runs_the_second_call_on_the_helper_unless_it_is_busy():
    me = threading.get_ident()
    started = threading.Event()

    def there():
        started.set()
        return threading.get_ident()

    here, there = beside(lambda: started.wait(10) and threading.get_ident(), there)
    assert here == me and there != me  # the helper took the second call while this thread ran the first
    release = threading.Event()
    blocker = helper_thread().submit(release.wait, 30)
    try:
        assert beside(threading.get_ident, threading.get_ident) == (me, me)
    finally:
        release.set()
    blocker.result()
