"""The broad phase's cull of primitives far from every other body (``candidates._near_others``): bodies without
self contact give their far primitives to no join, and the candidates stay brute force's, row for row."""
from __future__ import annotations

import numpy as np
import pytest

from ipcsim.contact.broad_phase import brute_force_candidates, build_candidates, candidates
from ipcsim.contact.broad_phase.boxes import body_boxes6, near_other_bodies
from ipcsim.geometry import CollisionMesh

from test_broad_phase import assert_same, sheet  # noqa: E402  (tests/contact is on sys.path)


def fingers_and_plate(self_contact_plate: bool = False, obstacle_plate: bool = False):
    """(mesh, x): two 24 x 24 sheets (1 m, bodies 0 and 1, 'fingers') standing apart in x, and a small 6 x 6
    sheet (0.2 m, body 2, the 'plate') whose edges lie within 2 mm of each finger's inner corner strip; a few
    codimensional points far away (body 3). No body but the plate (when asked) has self contact."""
    v0, f0 = sheet(24, 0.0)
    v1, f1 = sheet(24, 0.0)
    v0 = v0[:, [2, 0, 1]]                       # x = 0: the plane y-z
    v1 = v1[:, [2, 0, 1]] + [0.2 + 2e-3, 0, 0]  # x = 0.202
    vp, fp = sheet(6, 0.0, size=0.2)
    vp = vp + [1e-3, 0.0, 0.5]                  # z = 0.5, between the fingers' corners at y in [0, 0.2]
    parts = [CollisionMesh.from_triangle_mesh(v0, f0, body=0), CollisionMesh.from_triangle_mesh(v1, f1, body=1),
             CollisionMesh.from_triangle_mesh(vp, fp, body=2, is_obstacle=obstacle_plate),
             CollisionMesh.from_points(np.array([[5.0, 5.0, 5.0], [5.0, 5.0, 5.1]]), body=3)]
    mesh = CollisionMesh.concatenate(parts)
    mesh.self_contact = np.array([False, False, self_contact_plate, False])
    return mesh, mesh.rest_positions.copy()


def _selections(monkeypatch):
    """Spy on ``_near_others``: the list of its selections (vertex, edge and face ids), None where it declined."""
    found = []
    original = candidates._near_others

    def spy(*args):
        result = original(*args)
        found.append(None if result is None else result[0])
        return result

    monkeypatch.setattr(candidates, "_near_others", spy)
    return found


@pytest.mark.parametrize("self_contact_plate", [False, True])
@pytest.mark.parametrize("moving", [False, True])
def test_the_cull_keeps_brute_force_candidates(self_contact_plate, moving, monkeypatch):
    mesh, x0 = fingers_and_plate(self_contact_plate)
    rng = np.random.default_rng(4)
    x1 = x0 + rng.normal(0.0, 2e-3, x0.shape) if moving else None
    found = _selections(monkeypatch)
    radii = (0.0, 1e-3, 5e-3)
    for r in radii:
        got = build_candidates(mesh, x0, x1, r)
        assert_same(got, brute_force_candidates(mesh, x0, x1, r))
        if r > 0.0:
            assert len(got.vf) and len(got.ee)  # fingers and plate within 2 r: there is something to find
    # the cull ran each time and left most of the fingers out (each: 576 vertices, 1,058 faces, 1,633 edges)
    assert len(found) == len(radii) and all(sel is not None for sel in found)
    for (vs, es, fs), r in zip(found, radii):
        assert len(vs) + len(es) + len(fs) < 0.5 * (mesh.n_vertices + len(mesh.edges) + len(mesh.faces))
        lo, hi = np.minimum(x0, x0 if x1 is None else x1) - r, np.maximum(x0, x0 if x1 is None else x1) + r
        boxes = [(lo[mesh.body == b].min(axis=0), hi[mesh.body == b].max(axis=0)) for b in range(4)]
        meets = [any(np.all(lo[i] <= bh) and np.all(bl <= hi[i]) for b, (bl, bh) in enumerate(boxes)
                     if b != mesh.body[i]) for i in range(mesh.n_vertices)]
        kept = mesh.self_contact[mesh.body] | np.array(meets)
        np.testing.assert_array_equal(vs, np.flatnonzero(kept))  # exactly the vertices near another body
        assert not np.any(mesh.body[vs] == 3)  # the far points meet no other body's box


def test_without_the_cull_the_joins_give_the_same_rows(monkeypatch):
    mesh, x0 = fingers_and_plate()
    with_cull = build_candidates(mesh, x0, None, 1e-3)
    monkeypatch.setattr(candidates, "_near_others", lambda *args: None)
    assert_same(with_cull, build_candidates(mesh, x0, None, 1e-3))


def test_obstacle_bodies_are_culled_alike(monkeypatch):
    mesh, x0 = fingers_and_plate(obstacle_plate=True)
    found = _selections(monkeypatch)
    assert_same(build_candidates(mesh, x0, None, 1e-3), brute_force_candidates(mesh, x0, None, 1e-3))
    assert found[0] is not None


def test_no_cull_when_most_primitives_are_near_others(monkeypatch):
    """Two interleaved bodies: every primitive meets the other body's box, so the joins get everything."""
    v, f = sheet(10, 0.0)
    parts = [CollisionMesh.from_triangle_mesh(v, f, body=0), CollisionMesh.from_triangle_mesh(v + [0, 0, 1e-3], f,
                                                                                             body=1)]
    mesh = CollisionMesh.concatenate(parts)
    mesh.self_contact = np.array([False, False])
    found = _selections(monkeypatch)
    x = mesh.rest_positions
    assert_same(build_candidates(mesh, x, None, 1e-3), brute_force_candidates(mesh, x, None, 1e-3))
    assert found == [None]


def test_near_other_bodies_touching_boxes_and_own_body():
    bbox = np.array([[0.0, 0.0, 0.0, 1.0, 1.0, 1.0],    # body 0
                     [2.0, 0.0, 0.0, 3.0, 1.0, 1.0]])   # body 1
    box = np.array([[1.0, 0.5, 0.5, 1.5, 0.6, 0.6],     # body 1's primitive touching body 0's box at x = 1
                    [1.5, 0.5, 0.5, 1.9, 0.6, 0.6],     # body 1's primitive between the two boxes
                    [0.2, 0.2, 0.2, 0.3, 0.3, 0.3],     # body 0's primitive inside its own box only
                    [2.2, 0.2, 0.2, 2.3, 0.3, 0.3]])    # body 1's inside its own box (kept: self contact)
    owner = np.array([1, 1, 0, 1])
    got = near_other_bodies(box, owner, np.array([False, False]), bbox)
    np.testing.assert_array_equal(got, [True, False, False, False])
    got = near_other_bodies(box, owner, np.array([False, True]), bbox)
    np.testing.assert_array_equal(got, [True, True, False, True])


def test_body_boxes6_unions_and_empty_bodies():
    vbox = np.array([[0.0, 0.0, 0.0, 1.0, 1.0, 1.0], [-1.0, 2.0, 0.5, 0.0, 3.0, 0.7], [5.0, 5, 5, 6, 6, 6]])
    got = body_boxes6(vbox, np.array([0, 0, 2]), 3)
    np.testing.assert_array_equal(got[0], [-1.0, 0.0, 0.0, 1.0, 3.0, 1.0])
    np.testing.assert_array_equal(got[2], vbox[2])
    assert np.all(got[1, :3] == np.inf) and np.all(got[1, 3:] == -np.inf)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_random_bodies_spread_out_keep_brute_force_candidates(seed, monkeypatch):
    """Eight random sheets (one an obstacle, the last with self contact for odd seeds) spread over an 8 m cube with
    two pairs pushed together, random trajectories: the cull runs and the candidates are brute force's."""
    rng = np.random.default_rng(seed)
    parts = []
    centres = rng.uniform(0.0, 8.0, (8, 3))
    centres[1] = centres[0] + rng.normal(0.0, 0.05, 3)
    centres[3] = centres[2] + rng.normal(0.0, 0.05, 3)
    for b, c in enumerate(centres):
        v, f = sheet(int(rng.integers(5, 12)), 0.0, size=0.4)
        q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        parts.append(CollisionMesh.from_triangle_mesh(v @ q.T + c, f, body=b, is_obstacle=bool(b == 5)))
    mesh = CollisionMesh.concatenate(parts)
    mesh.self_contact = np.arange(8) == 7 if seed % 2 else np.zeros(8, bool)
    found = _selections(monkeypatch)
    x0 = mesh.rest_positions
    x1 = x0 + rng.normal(0.0, 0.01, x0.shape)
    for r in (0.0, 0.02):
        got = build_candidates(mesh, x0, x1, r)
        assert_same(got, brute_force_candidates(mesh, x0, x1, r))
    assert len(got.vf) and len(got.ee)  # the pushed-together pairs meet
    assert all(sel is not None for sel in found)
