"""Thread counts for small parallel calls (``runtime.threads``)."""
from __future__ import annotations

import numba as nb
import pytest

from ipcsim.runtime import threads


def test_small_work_runs_on_one_thread(monkeypatch):
    monkeypatch.setattr(threads, "cpu_cores", lambda: 2)
    assert threads.threads_for(0) == 1
    assert threads.threads_for(threads.PARALLEL_MIN_WORK - 1) == 1
    assert threads.threads_for(threads.PARALLEL_MIN_WORK) == nb.get_num_threads()
    monkeypatch.setattr(threads, "cpu_cores", lambda: 16)
    assert threads.threads_for(threads.PARALLEL_MIN_WORK // 10 - 1) == 1
    assert threads.threads_for(threads.PARALLEL_MIN_WORK // 10) == nb.get_num_threads()


def test_numba_threads_restores_the_count():
    before = nb.get_num_threads()
    with threads.numba_threads(1) as n:
        assert n == 1 and nb.get_num_threads() == 1
    assert nb.get_num_threads() == before
    with pytest.raises(RuntimeError):
        with threads.numba_threads(1):
            raise RuntimeError("inside")
    assert nb.get_num_threads() == before
    with threads.numba_threads(10**6) as n:  # clamped to the pool size
        assert n == nb.config.NUMBA_NUM_THREADS
    assert nb.get_num_threads() == before


def _sheets_mesh():
    import numpy as np

    from ipcsim.geometry.collision_mesh import CollisionMesh

    n = 40
    s = np.linspace(0.0, 1.0, n)
    gx, gy = np.meshgrid(s, s, indexing="ij")
    idx = np.arange(n * n).reshape(n, n)
    a, b, c, d = idx[:-1, :-1].ravel(), idx[1:, :-1].ravel(), idx[1:, 1:].ravel(), idx[:-1, 1:].ravel()
    f = np.vstack([np.stack([a, b, c], 1), np.stack([a, c, d], 1)])
    meshes = [CollisionMesh.from_triangle_mesh(np.stack([gx.ravel(), gy.ravel(), np.full(n * n, z)], 1), f, body=k)
              for k, z in enumerate((0.0, 0.004))]
    mesh = CollisionMesh.concatenate(meshes)
    rng = np.random.default_rng(3)
    x = mesh.rest_positions + 1e-3 * rng.standard_normal((mesh.n_vertices, 3))
    return mesh, x


def test_side_by_side_joins_give_the_same_candidates(monkeypatch):
    """vf and ee joins run concurrently (two Python threads) on small machines: same pairs as one after the other."""
    import numpy as np

    from ipcsim.contact.broad_phase import build_candidates, candidates, cell_join

    mesh, x = _sheets_mesh()
    monkeypatch.setattr(cell_join, "THREADS", 1)
    monkeypatch.setattr(candidates, "SIDE_BY_SIDE_MIN_BOXES", 10**9)
    serial = [build_candidates(mesh, x, x1, inflation_radius=0.003) for x1 in (None, x + 0.01)]
    monkeypatch.setattr(candidates, "SIDE_BY_SIDE_MIN_BOXES", 0)
    with threads.numba_threads(2):
        assert candidates._side_by_side("auto", mesh.n_faces + mesh.n_edges) == (nb.get_num_threads() >= 2)
        both = [build_candidates(mesh, x, x1, inflation_radius=0.003) for x1 in (None, x + 0.01)]
    for a, b in zip(serial, both):
        assert len(a.ee) > 1000 and len(a.vf) > 1000
        for kind in ("vf", "ee", "ev", "vv", "pv"):
            assert np.array_equal(getattr(a, kind), getattr(b, kind)), kind


def test_side_by_side_joins_work_in_a_forked_child(monkeypatch):
    """The helper thread does not survive fork(); a child makes its own instead of waiting on a dead one."""
    import multiprocessing as mp
    import sys

    from ipcsim.contact.broad_phase import build_candidates, candidates

    if sys.platform == "win32":
        pytest.skip("no fork on Windows")
    mesh, x = _sheets_mesh()
    monkeypatch.setattr(candidates, "SIDE_BY_SIDE_MIN_BOXES", 0)
    expected = build_candidates(mesh, x, None, inflation_radius=0.003)
    ctx = mp.get_context("fork")
    with ctx.Pool(1) as pool:
        got = pool.apply_async(build_candidates, (mesh, x, None, 0.003)).get(timeout=120)
    assert got.as_sets() == expected.as_sets()


def test_split_in_two_only_for_mid_sized_work_on_small_machines(monkeypatch):
    monkeypatch.setattr(threads, "cpu_cores", lambda: 2)
    with threads.numba_threads(2):
        two = nb.get_num_threads() >= 2  # a 1-thread Numba pool never splits
        assert not threads.split_in_two(threads.SPLIT_MIN_WORK - 1)
        assert threads.split_in_two(threads.SPLIT_MIN_WORK) == two
        assert threads.split_in_two(threads.PARALLEL_MIN_WORK - 1) == two
        assert not threads.split_in_two(threads.PARALLEL_MIN_WORK)  # a Numba parallel region instead
    monkeypatch.setattr(threads, "cpu_cores", lambda: 16)
    assert not threads.split_in_two(threads.SPLIT_MIN_WORK)


def test_ccd_in_two_halves_gives_the_same_step(monkeypatch):
    """The CCD narrow phase split between the calling thread and the helper thread (sharing the earliest time
    found so far) returns exactly the single-thread step, also when the earliest contact lies in a chunk of
    the helper thread's half (the odd chunks)."""
    import numpy as np

    from ipcsim.contact.broad_phase import build_candidates
    from ipcsim.contact.ccd import stepsize

    mesh, x = _sheets_mesh()
    halves = set()
    for seed in range(6):
        rng = np.random.default_rng(seed)
        x1 = x + 2e-3 * rng.standard_normal(x.shape)  # sheets 4 mm apart: a few pairs collide
        cands = build_candidates(mesh, x, x1)
        assert len(cands) >= threads.SPLIT_MIN_WORK
        best = np.ones(2 * stepsize._CHUNKS_PER_THREAD)  # every chunk's earliest time, serially
        args = (cands.vf, cands.ee, cands.ev, cands.vv, *stepsize._connectivity(mesh), x, x1, 0.0,
                stepsize.CONSERVATIVE_RESCALING, stepsize.MAX_ITERATIONS)
        stepsize.chunks_toi(0, 1, *args, best)
        halves.add(int(np.argmin(best)) % 2)
        steps = []
        for split in (False, True):
            monkeypatch.setattr(stepsize, "split_in_two", lambda work, split=split: split)
            steps.append(stepsize.compute_collision_free_stepsize(mesh, x, x1, candidates=cands))
        assert 0.0 < steps[0] < 1.0 and steps[0] == best.min()
        assert steps[1] == steps[0]
    assert halves == {0, 1}  # the earliest contact was in the calling thread's half and in the helper's


@pytest.fixture
def busy_helper():
    """The helper thread held by another task for the duration of the test."""
    import threading

    release = threading.Event()
    blocker = threads.helper_thread().submit(release.wait, 60)
    yield blocker
    release.set()
    blocker.result()


def test_side_by_side_joins_with_the_helper_busy(monkeypatch, busy_helper):
    """When the helper cannot start its join, this thread runs both (``threads.beside``): the same pairs."""
    import numpy as np

    from ipcsim.contact.broad_phase import build_candidates, candidates

    mesh, x = _sheets_mesh()
    expected = build_candidates(mesh, x, x + 0.01, inflation_radius=0.003)
    monkeypatch.setattr(candidates, "SIDE_BY_SIDE_MIN_BOXES", 0)
    monkeypatch.setattr(candidates, "_side_by_side", lambda method, n: True)
    got = build_candidates(mesh, x, x + 0.01, inflation_radius=0.003)
    assert not busy_helper.done()
    for kind in ("vf", "ee", "ev", "vv", "pv"):
        assert np.array_equal(getattr(expected, kind), getattr(got, kind)), kind


def test_ccd_halves_give_one_step_size_with_the_helper_free_or_busy(monkeypatch):
    """The CCD step bound from two halves (even and odd chunks, ``split_in_two``) equals the one-thread bound,
    whether the helper thread takes its half or this thread runs both."""
    import threading

    from ipcsim.contact.broad_phase import build_candidates
    from ipcsim.contact.ccd import stepsize

    mesh, x = _sheets_mesh()
    x1 = x.copy()
    x1[mesh.body == 1, 2] -= 0.006  # the upper sheet moves through the lower one: a real time of impact
    cands = build_candidates(mesh, x, x1, inflation_radius=0.0)
    monkeypatch.setattr(stepsize, "split_in_two", lambda m: False)
    one = stepsize.compute_collision_free_stepsize(mesh, x, x1, candidates=cands)
    assert 0.0 < one < 1.0
    monkeypatch.setattr(stepsize, "split_in_two", lambda m: True)
    assert stepsize.compute_collision_free_stepsize(mesh, x, x1, candidates=cands) == one
    release = threading.Event()
    blocker = threads.helper_thread().submit(release.wait, 60)
    try:
        assert stepsize.compute_collision_free_stepsize(mesh, x, x1, candidates=cands) == one
        assert not blocker.done()
    finally:
        release.set()
    blocker.result()
