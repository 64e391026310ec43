"""The cell join (``broad_phase.cell_join``) on the paths a mesh scene rarely takes: hashed buckets,
overflow boxes on both sides, forced cell sizes, boxes of zero size, and its own argument checks."""
from __future__ import annotations

import numpy as np
import pytest

from ipcsim.contact.broad_phase import brute_force_candidates, build_candidates, cell_join, columns
from ipcsim.contact.broad_phase.boxes import simplex_boxes6, vertex_boxes6
from ipcsim.contact.broad_phase.brute_force import brute_force_pairs
from ipcsim.geometry import CollisionMesh

from test_broad_phase import assert_same, random_soup  # noqa: E402  (tests/contact is on sys.path)


def box_sets(rng, n_q, n_e, spread, size, kq=1, ke=3, n_ids=None):
    """Random boxes with random vertex ids (some shared) and obstacle flags: ((box, verts, obst), ...)."""
    n_ids = n_ids or 4 * (n_q + n_e)

    def one(n, k):
        lo = rng.uniform(0, spread, (n, 3))
        box = np.hstack([lo, lo + rng.uniform(0, size, (n, 3))])
        return box, rng.integers(0, n_ids, (n, k)).astype(np.int64), rng.random(n) < 0.2

    return one(n_q, kq), one(n_e, ke)


def reference(q, e, self_query):
    as_tuple = lambda d: (d[0][:, :3], d[0][:, 3:], d[1], d[2])  # noqa: E731
    return brute_force_pairs(as_tuple(q), as_tuple(e), self_query)


@pytest.fixture(params=["compact columns", "cell join"])
def join_kind(request, monkeypatch):
    """Both serial joins of ``cell_pairs6``: compact columns (small inputs) and the cell join (all others)."""
    if request.param == "cell join":
        monkeypatch.setattr(cell_join, "COMPACT_MAX_BOXES", 0)
    return request.param


@pytest.mark.parametrize("self_query", [False, True])
@pytest.mark.parametrize("cell_size", [0.0, 1e-3, 0.05, 0.3, 10.0])
def test_any_cell_size_gives_the_brute_force_pairs(self_query, cell_size, join_kind):
    rng = np.random.default_rng(21)
    q, e = box_sets(rng, 300, 400, 1.0, 0.15, kq=2, ke=2 if self_query else 3)
    got = cell_join.cell_pairs6(q, e, self_query, cell_size)
    ref = reference(q, q if self_query else e, self_query)
    np.testing.assert_array_equal(got, ref)
    assert len(ref) > 100


@pytest.mark.parametrize("self_query", [False, True])
def test_hashed_buckets_far_apart_clusters(self_query):
    # two clusters 1e5 box sizes apart: the dense grid would need ~1e15 cells, so buckets are hashed
    rng = np.random.default_rng(22)
    q, e = box_sets(rng, 200, 200, 1.0, 0.05, kq=2, ke=2 if self_query else 3)
    for d in (q, e):
        d[0][::2] += 1e4
    e_ = q if self_query else e
    h = cell_join.choose_cell_size(q[0], e_[0])
    grid_q = cell_join._grids(q, e_, self_query, h)[0]
    keys = grid_q[3]
    assert len(keys) == len(grid_q[1]) and np.all(keys >= 0)  # hashed: the entries carry their column keys
    assert len(np.unique(keys)) > len(grid_q[0]) // 8  # many columns, in buckets that may mix columns
    np.testing.assert_array_equal(cell_join.cell_pairs6(q, e, self_query), reference(q, e_, self_query))


@pytest.mark.parametrize("self_query", [False, True])
def test_overflow_boxes_on_both_sides(self_query):
    rng = np.random.default_rng(23)
    q, e = box_sets(rng, 400, 400, 1.0, 0.03, kq=2, ke=2 if self_query else 3)
    for d in (q, e):  # a few boxes spanning the whole scene, overlapping each other
        d[0][:5, :3] = rng.uniform(-0.1, 0.0, (5, 3))
        d[0][:5, 3:] = rng.uniform(1.0, 1.1, (5, 3))
        d[2][:5] = False
    e_ = q if self_query else e
    h = cell_join.choose_cell_size(q[0], e_[0])
    _, over_q, _, over_e, _ = cell_join._grids(q, e_, self_query, h)
    assert len(over_q) == 5 and len(over_e) == 5
    got = cell_join.cell_pairs6(q, e, self_query)
    ref = reference(q, e_, self_query)
    np.testing.assert_array_equal(got, ref)
    big = set(range(5))
    assert sum(1 for a, b in ref.tolist() if a in big and b in big) > 0  # overflow-overflow pairs exist


def test_many_overflow_boxes_enlarge_the_cells():
    rng = np.random.default_rng(24)
    q, _ = box_sets(rng, 600, 0, 1.0, 0.01, kq=2)
    q[0][:300, 3:] = q[0][:300, :3] + 0.5  # half of the boxes are huge: overflow would be quadratic
    h = cell_join.choose_cell_size(q[0], q[0])
    _, over, _, _, _ = cell_join._grids(q, q, True, h)
    assert len(over) < 300  # the cell size was doubled
    np.testing.assert_array_equal(cell_join.cell_pairs6(q, q, True), reference(q, q, True))


def test_points_of_zero_size_and_coincident_points():
    rng = np.random.default_rng(25)
    x = rng.uniform(0, 1, (200, 3))
    x[100:150] = x[:50]  # coincident points
    mesh = CollisionMesh.from_points(x)
    for r in (0.0, 0.02):
        fast = build_candidates(mesh, x, None, r)
        assert_same(fast, brute_force_candidates(mesh, x, None, r))
    assert len(build_candidates(mesh, x, None, 0.0).vv) >= 50


def test_flat_scene_and_trajectories():
    rng = np.random.default_rng(26)
    mesh = random_soup(rng, n_tris=120, planes=False)
    x0 = mesh.rest_positions.copy()
    x0[:, 2] = 0.0  # every box flat in z
    x1 = x0 + rng.normal(0, 0.05, x0.shape)
    for x1_ in (None, x1):
        assert_same(build_candidates(mesh, x0, x1_, 0.01), brute_force_candidates(mesh, x0, x1_, 0.01))


def test_numba_boxes_equal_numpy_boxes():
    rng = np.random.default_rng(27)
    x0, x1 = rng.normal(size=(50, 3)), rng.normal(size=(50, 3))
    faces = rng.integers(0, 50, (30, 3)).astype(np.int64)
    vbox = vertex_boxes6(x0, x1, 0.1)
    from ipcsim.contact.broad_phase.boxes import simplex_boxes, vertex_boxes

    lo, hi = vertex_boxes(x0, x1, 0.1)
    np.testing.assert_array_equal(vbox, np.hstack([lo, hi]))
    flo, fhi = simplex_boxes(lo, hi, faces)
    np.testing.assert_array_equal(simplex_boxes6(vbox, faces), np.hstack([flo, fhi]))


def test_tuple_api_matches_brute_force_pairs():
    from ipcsim.contact.broad_phase.brute_force import brute_force_pairs

    rng = np.random.default_rng(28)
    q, e = box_sets(rng, 200, 300, 1.0, 0.1, kq=2, ke=3)
    as_tuple = lambda d: (d[0][:, :3], d[0][:, 3:], d[1], d[2])  # noqa: E731
    for self_query in (False, True):
        e_ = q if self_query else e
        np.testing.assert_array_equal(cell_join.cell_pairs(as_tuple(q), as_tuple(e_), self_query),
                                      brute_force_pairs(as_tuple(q), as_tuple(e_), self_query))


def test_empty_sides():
    box = np.zeros((0, 6))
    empty = (box, np.zeros((0, 2), np.int64), np.zeros(0, bool))
    one = (np.zeros((1, 6)), np.zeros((1, 2), np.int64), np.zeros(1, bool))
    assert cell_join.cell_pairs6(empty, one, False).shape == (0, 2)
    assert cell_join.cell_pairs6(one, empty, False).shape == (0, 2)
    assert cell_join.cell_pairs6(one, one, True).shape == (0, 2)


def test_sheets_first_guess_too_small_still_exact(join_kind):
    # the first call's buffer is sized from a guess; a wrong guess must only cost time
    from test_broad_phase import two_sheets

    mesh = two_sheets(20, 0.5e-3)
    x = mesh.rest_positions
    cell_join._GUESS.clear()
    ref = brute_force_candidates(mesh, x, None, 1e-3)
    key = (len(mesh.edges), len(mesh.edges), True)
    cell_join._GUESS[key] = 1  # far too small
    assert_same(build_candidates(mesh, x, None, 1e-3), ref)
    assert cell_join._GUESS[key] == len(ref.ee)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("guess", [None, 1])
def test_parallel_join_equals_serial(threads, guess, monkeypatch):
    monkeypatch.setattr(cell_join, "THREADS", threads)
    monkeypatch.setattr(cell_join, "PARALLEL_MIN_BOXES", 0)
    rng = np.random.default_rng(29)
    q, e = box_sets(rng, 500, 600, 1.0, 0.1, kq=2, ke=3)
    for d in (q, e):  # with overflow boxes too
        d[0][:3, :3] = -0.1
        d[0][:3, 3:] = 1.1
        d[2][:3] = False
    for self_query in (False, True):
        e_ = q if self_query else e
        if guess is not None:
            cell_join._GUESS[(len(q[0]), len(e_[0]), self_query)] = guess
        np.testing.assert_array_equal(cell_join.cell_pairs6(q, e, self_query), reference(q, e_, self_query))


@pytest.mark.parametrize("self_query", [False, True])
def test_bucket_entries_are_in_sweep_order(self_query):
    rng = np.random.default_rng(31)
    q, e = box_sets(rng, 300, 300, 1.0, 0.2, kq=2, ke=2 if self_query else 3)
    e = q if self_query else e
    h = cell_join.choose_cell_size(q[0], e[0])
    grid_q, _, grid_e, _, axis = cell_join._grids(q, e, self_query, h)
    for grid, data in ((grid_q, q), (grid_e, e)):
        start, entry, box, ids = grid[0], grid[1], grid[4], grid[7]
        np.testing.assert_array_equal(box, data[0][ids])  # the boxes, reordered
        assert np.all(np.diff(box[:, axis]) >= 0)  # ascending lower side along the sweep axis
        for b in range(len(start) - 1):
            assert np.all(np.diff(entry[start[b]:start[b + 1]]) > 0), f"bucket {b} not in sweep order"
        assert len(np.unique(entry)) == len(box)  # no overflow here: every box has entries


def test_sweep_order_sorts_clusters_and_ties_stably():
    rng = np.random.default_rng(33)
    x = np.concatenate([rng.uniform(0, 1, 300), 1e4 + rng.uniform(0, 1, 300), rng.integers(0, 5, 100) * 0.5,
                        [-1e300, 1e300, 0.0, 0.0]])  # two far clusters (a few bins each), lattice ties
    box = np.zeros((len(x), 6))
    box[:, 1] = x
    sweep = (x.min(), (2 * len(x) + 64) / (x.max() - x.min()), float(2 * len(x) + 64))
    np.testing.assert_array_equal(columns.sweep_order(box, 1, sweep), np.argsort(x, kind="stable"))


@pytest.mark.parametrize("self_query", [False, True])
@pytest.mark.parametrize("cell_size", [0.0, 0.25, 1.0])
def test_touching_and_tied_boxes_on_a_lattice(self_query, cell_size, join_kind):
    # lattice coordinates: many boxes share their lower sweep coordinate, and many touch exactly
    # (hi of one == lo of the other), the boundary of the sweep's stopping test
    rng = np.random.default_rng(32)

    def one(n, k):
        lo = rng.integers(0, 8, (n, 3)) * 0.25
        box = np.hstack([lo, lo + rng.integers(0, 3, (n, 3)) * 0.25])
        return box, rng.integers(0, 4 * n, (n, k)).astype(np.int64), rng.random(n) < 0.2

    q, e = one(250, 2), one(250, 2 if self_query else 3)
    got = cell_join.cell_pairs6(q, e, self_query, cell_size)
    ref = reference(q, q if self_query else e, self_query)
    np.testing.assert_array_equal(got, ref)
    touching = np.any(q[0][:, None, 3:] == (q if self_query else e)[0][None, :, :3])
    assert touching and len(ref) > 500


def test_sweep_bin_is_monotone_and_clamped():
    sweep = (1.0, 10.0, 50.0)  # origin 1 m, 10 bins per m, 50 bins
    x = np.concatenate([[-1e300, -5.0, 0.999, 1.0], np.linspace(1.0, 7.0, 601), [1e300, np.inf]])
    bins = np.array([columns._sweep_bin(v, sweep) for v in x])
    assert np.all(np.diff(bins) >= 0)
    assert bins.min() == 0 and bins.max() == 49
    assert columns._sweep_bin(1.25, sweep) == 2


@pytest.mark.parametrize("self_query", [False, True])
def test_long_boxes_along_the_sweep_axis_and_a_flat_scene(self_query):
    # boxes 0.5-1 long along the longest axis (fast trajectories): each column's sweep scans far
    rng = np.random.default_rng(34)
    q, e = box_sets(rng, 300, 300, 1.0, 0.05, kq=2, ke=2 if self_query else 3)
    for d in (q, e):
        d[0][:, 0] *= 3.0
        d[0][:, 3] = d[0][:, 0] + rng.uniform(0.5, 1.0, len(d[0]))
    e_ = q if self_query else e
    assert cell_join._grids(q, e_, self_query, cell_join.choose_cell_size(q[0], e_[0]))[4] == 0  # sweep along x
    np.testing.assert_array_equal(cell_join.cell_pairs6(q, e, self_query), reference(q, e_, self_query))
    for d in (q, e):  # every box the same point: a scene of zero extent
        d[0][:] = 0.25
    ref = reference(q, e_, self_query)
    assert len(ref) > 1000
    np.testing.assert_array_equal(cell_join.cell_pairs6(q, e, self_query), ref)
