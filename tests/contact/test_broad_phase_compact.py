"""The compact column join (``broad_phase.compact_join``) and the one-call mesh join (``broad_phase.mesh_join``)
against the brute force, around the size where ``cell_join.cell_pairs6`` and ``build_candidates`` switch to them,
on degenerate boxes, and on the inputs they leave to the cell join."""
from __future__ import annotations

import numpy as np
import pytest

from ipcsim.contact.broad_phase import brute_force_candidates, build_candidates, candidates, cell_join, mesh_join
from ipcsim.contact.broad_phase.compact_join import compact_join_pairs
from ipcsim.geometry import CollisionMesh

from test_broad_phase import assert_same, random_soup, two_sheets  # noqa: E402  (tests/contact is on sys.path)
from test_broad_phase_cell_join import reference  # noqa: E402


def degenerate_boxes(rng, n, k, n_ids, cells=6, lattice=0.25):
    """(box (n, 6), verts (n, k), obst (n,)): boxes on a lattice of cells^3 points (many share a lower side or
    touch exactly, hi of one == lo of another), a fifth of zero size, a tenth exact copies of others, some of zero
    width along one axis only; random vertex ids (some shared) and obstacle flags."""
    lo = rng.integers(0, cells, (n, 3)) * lattice
    size = rng.integers(0, 3, (n, 3)) * lattice
    size[rng.random(n) < 0.2] = 0.0  # points
    size[np.arange(n), rng.integers(0, 3, n)] *= rng.random(n) < 0.5  # flat along one axis
    box = np.hstack([lo, lo + size])
    copies = rng.random(n) < 0.1
    box[copies] = box[rng.integers(0, n, copies.sum())]
    return box, rng.integers(0, n_ids, (n, k)).astype(np.int64), rng.random(n) < 0.2


def counting_calls(monkeypatch, module, name):
    """Wrap module.name so that its calls are counted; returns the list of their results."""
    found = []
    original = getattr(module, name)

    def spy(*args):
        result = original(*args)
        found.append(result)
        return result

    monkeypatch.setattr(module, name, spy)
    return found


@pytest.mark.parametrize("self_query", [False, True])
@pytest.mark.parametrize("n_boxes", [199, 200, 201])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_degenerate_boxes_around_the_crossover(self_query, n_boxes, seed, monkeypatch):
    # the crossover moved down to 200 boxes (both sides): 199 joins in compact columns, 200 and 201 in the cell join
    monkeypatch.setattr(cell_join, "COMPACT_MAX_BOXES", 200)
    calls = counting_calls(monkeypatch, cell_join, "compact_join_pairs")
    rng = np.random.default_rng(seed)
    nq = (n_boxes + 1) // 2 if self_query else n_boxes // 3
    ne = nq if self_query else n_boxes - nq
    q = degenerate_boxes(rng, nq, 2, 3 * n_boxes)
    e = q if self_query else degenerate_boxes(rng, ne, 3, 3 * n_boxes)
    got = cell_join.cell_pairs6(q, e, self_query)
    np.testing.assert_array_equal(got, reference(q, e, self_query))
    assert len(calls) == (1 if nq + ne < 200 else 0) and all(ok for _, ok in calls)
    assert len(got) > 50


@pytest.mark.parametrize("self_query", [False, True])
def test_random_boxes_at_the_real_crossover(self_query):
    rng = np.random.default_rng(3)
    n_all = cell_join.COMPACT_MAX_BOXES
    for n_boxes in (n_all - 2, n_all):  # compact columns, then the cell join
        nq = n_boxes // 2
        q = degenerate_boxes(rng, nq, 2, 2 * n_boxes, cells=40)
        e = q if self_query else degenerate_boxes(rng, n_boxes - nq, 3, 2 * n_boxes, cells=40)
        got, ok = compact_join_pairs(q, e, self_query, 0.0, 1000)
        ref = reference(q, e, self_query)
        assert ok
        np.testing.assert_array_equal(got, ref)
        np.testing.assert_array_equal(cell_join.cell_pairs6(q, e, self_query), ref)


@pytest.mark.parametrize("self_query", [False, True])
@pytest.mark.parametrize("cell_size", [0.0, 0.1, 0.25, 0.6])
def test_compact_columns_equal_the_cell_join_and_the_brute_force(self_query, cell_size):
    rng = np.random.default_rng(4)
    q = degenerate_boxes(rng, 300, 2, 900)
    e = q if self_query else degenerate_boxes(rng, 250, 1, 900)
    got, ok = compact_join_pairs(q, e, self_query, cell_size, 1)  # buffer far too small: joins twice
    assert ok
    np.testing.assert_array_equal(got, reference(q, e, self_query))
    np.testing.assert_array_equal(got, cell_join.cell_join_pairs(q, e, self_query, cell_size, 1000))


def test_every_box_the_same_point():
    rng = np.random.default_rng(5)
    q = degenerate_boxes(rng, 120, 2, 400)
    q[0][:] = 0.5  # one point: a scene of zero extent
    got, ok = compact_join_pairs(q, q, True, 0.0, 64)
    assert ok and len(got) > 1000
    np.testing.assert_array_equal(got, reference(q, q, True))


@pytest.mark.parametrize("self_query", [False, True])
def test_inputs_left_to_the_cell_join(self_query):
    rng = np.random.default_rng(6)
    base = degenerate_boxes(rng, 200, 2, 600)

    def changed(edit):
        q = tuple(a.copy() for a in base)
        edit(q)
        return q

    def far_apart(q):  # a dense grid would need ~1e10 columns: hashed buckets
        q[0][::2] += 1e4

    def huge_box(q):  # covers every column (more than columns.MAX_CELLS)
        q[0][0, :3], q[0][0, 3:] = -1.0, 3.0

    def inverted(q):  # lo > hi: not a box
        q[0][3, 0], q[0][3, 3] = 1.0, 0.5

    def big_ids(q):  # ids far beyond the number of boxes
        q[1][7, 1] = 10**9

    def negative_ids(q):
        q[1][7, 1] = -5

    for edit in (far_apart, huge_box, inverted, big_ids, negative_ids):
        q = changed(edit)
        got, ok = compact_join_pairs(q, q, self_query, 0.0, 64)
        assert not ok and got.shape == (0, 2), edit.__name__
        expected = cell_join.cell_join_pairs(q, q, self_query, 0.0, 64)
        np.testing.assert_array_equal(cell_join.cell_pairs6(q, q, self_query), expected)
        if edit is not inverted:
            np.testing.assert_array_equal(expected, reference(q, q, self_query))


# ------------------------------------------------------------------------------------ one call per mesh
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("moving", [False, True])
def test_mesh_join_equals_brute_force(seed, moving, monkeypatch):
    calls = counting_calls(monkeypatch, candidates, "mesh_pairs")
    _same_as_brute_force(*_soup_with_rigid_bodies(seed, moving))
    assert len(calls) == 3 and all(found is not None for found in calls)


def _soup_with_rigid_bodies(seed: int, moving: bool):
    """(mesh, x0, x1): a random soup whose bodies 0 (triangles) and 3 (segments) have no self contact."""
    rng = np.random.default_rng(seed)
    mesh = random_soup(rng, n_tris=150, n_points=30, n_segments=30, obstacle_tris=30)
    mesh.self_contact = np.array([False, True, True, False, True])
    x0 = mesh.rest_positions
    return mesh, x0, (x0 + rng.normal(0, 0.03, x0.shape) if moving else None)


def _same_as_brute_force(mesh, x0, x1) -> None:
    for r in (0.0, 0.01, 0.05):
        assert_same(build_candidates(mesh, x0, x1, r), brute_force_candidates(mesh, x0, x1, r))


@pytest.mark.parametrize("moving", [False, True])
def test_the_joins_leave_out_pairs_within_a_body_without_self_contact(moving, monkeypatch):
    """With mesh_pairs declined (the two-join path of large meshes) the candidates are brute force's, and the
    joins already leave out the pairs of two primitives of one body without self contact: ``_drop_self_pairs``
    finds no vertex-face or edge-edge pair to remove."""
    monkeypatch.setattr(candidates, "mesh_pairs", lambda *args: None)
    removed = []
    drop = candidates._drop_self_pairs

    def counting_drop(out, mesh):
        before = (len(out.vf), len(out.ee))
        drop(out, mesh)
        removed.append((before[0] - len(out.vf), before[1] - len(out.ee)))

    monkeypatch.setattr(candidates, "_drop_self_pairs", counting_drop)
    _same_as_brute_force(*_soup_with_rigid_bodies(3, moving))
    joins, brute = removed[0::2], removed[1::2]
    assert joins == [(0, 0)] * 3
    assert min(vf + ee for vf, ee in brute) > 0  # brute force does find such pairs, and the drop removes them


@pytest.mark.parametrize("shape", ["lattice", "flat", "one point"])
def test_mesh_join_on_degenerate_positions(shape, monkeypatch):
    calls = counting_calls(monkeypatch, candidates, "mesh_pairs")
    rng = np.random.default_rng(7)
    mesh = random_soup(rng, n_tris=80, obstacle_tris=20)
    x = mesh.rest_positions.copy()
    if shape == "lattice":  # vertex boxes on a lattice touch exactly at faces, edges and corners
        x = np.round(x / 0.05) * 0.05
    elif shape == "flat":
        x[:, 2] = 0.0
    else:
        x[:] = 0.25
    for r in (0.0, 0.025):
        assert_same(build_candidates(mesh, x, None, r), brute_force_candidates(mesh, x, None, r))
    assert all(found is not None for found in calls) and len(calls) == 2


@pytest.mark.parametrize("n", [8, 9])
def test_mesh_join_around_its_crossover(n, monkeypatch):
    # two 8 x 8 sheets: 196 faces + 322 edges; the crossover moved to 2 * 322 + 1 boxes per join
    mesh = two_sheets(n, 0.5e-3)
    monkeypatch.setattr(cell_join, "COMPACT_MAX_BOXES", 2 * 322 + 1)
    calls = counting_calls(monkeypatch, candidates, "mesh_pairs")
    x0 = mesh.rest_positions
    x1 = x0 + np.random.default_rng(8).normal(0, 2e-3, x0.shape)
    assert_same(build_candidates(mesh, x0, x1, 1e-3), brute_force_candidates(mesh, x0, x1, 1e-3))
    assert len(calls) == (1 if n == 8 else 0)


def test_mesh_join_leaves_far_apart_parts_to_the_cell_join(monkeypatch):
    calls = counting_calls(monkeypatch, mesh_join, "mesh_join_pairs")
    near = two_sheets(6, 0.5e-3)
    far = CollisionMesh.from_triangle_mesh(near.rest_positions + 1e4, near.faces, body=2)
    mesh = CollisionMesh.concatenate([near, far])
    x = mesh.rest_positions
    assert_same(build_candidates(mesh, x, None, 1e-3), brute_force_candidates(mesh, x, None, 1e-3))
    assert len(calls) == 1 and not calls[0][2]  # ~1e9 columns: the two joins of the cell join (hashed) instead
