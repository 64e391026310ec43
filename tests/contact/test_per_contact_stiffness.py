"""Per-contact barrier stiffness (softer side) and the self-contact filter of the broad phase."""
from __future__ import annotations

import numpy as np
import pytest

from ipcsim.contact.broad_phase import build_candidates
from ipcsim.contact.collisions import build_collisions, stencil_stiffness
from ipcsim.contact.collisions_data import EE, EV, FV, PV, VV
from ipcsim.contact.stiffness import softer_side_stiffness, surface_youngs_modulus
from ipcsim.geometry import CollisionMesh


def _sheet(n: int, z: float):
    g = np.linspace(0.0, 1.0, n)
    X, Y = np.meshgrid(g, g, indexing="ij")
    v = np.stack([X.ravel(), Y.ravel(), np.full(n * n, z)], axis=1)
    idx = np.arange(n * n).reshape(n, n)
    a, b, c, d = idx[:-1, :-1].ravel(), idx[1:, :-1].ravel(), idx[1:, 1:].ravel(), idx[:-1, 1:].ravel()
    return v, np.concatenate([np.stack([a, b, c], 1), np.stack([a, c, d], 1)])


def _two_sheets(gap: float, bodies=(0, 1), obstacle=(False, False)) -> CollisionMesh:
    meshes = [CollisionMesh.from_triangle_mesh(*_sheet(4, z), body=b, is_obstacle=o)
              for z, b, o in zip((0.0, gap), bodies, obstacle)]
    return CollisionMesh.concatenate(meshes)


def test_stencil_stiffness_takes_the_softer_side_of_every_kind():
    s = np.array([1.0, 0.25, 0.5, np.inf, 0.125])
    kind = np.array([VV, EV, EE, FV, PV, FV])
    verts = np.array([[0, 1, -1, -1], [2, 0, 1, -1], [0, 2, 4, 1], [3, 2, 1, 0], [3, -1, -1, -1], [2, 3, 3, 3]])
    # VV: min(1, .25); EV: (2 | 0 1) -> min(.5, 1); EE: (0 2 | 4 1) -> min(1, .125); FV: (3 | 2 1 0) -> min(inf, .5);
    # PV: an obstacle vertex on a plane (never built) -> 1; FV: (2 | 3 3 3) -> .5
    np.testing.assert_array_equal(stencil_stiffness(s, kind, verts), [0.25, 0.5, 0.125, 0.5, 1.0, 0.5])


def test_build_collisions_scales_each_stencil_by_its_softer_side():
    mesh = _two_sheets(5e-4)
    x = mesh.rest_positions
    plain = build_collisions(mesh, x, 1e-3, use_area_weighting=True, use_improved_max_approximator=True)
    scale = np.where(mesh.body == 0, 1.0, 1e-4)
    scaled = build_collisions(mesh, x, 1e-3, use_area_weighting=True, use_improved_max_approximator=True,
                              vertex_stiffness=scale)
    assert len(plain) > 0
    np.testing.assert_array_equal(scaled.vertices, plain.vertices)
    np.testing.assert_allclose(scaled.weight, 1e-4 * plain.weight, rtol=1e-15)  # every pair: sheet 0 vs sheet 1
    same = build_collisions(mesh, x, 1e-3, vertex_stiffness=np.ones(mesh.n_vertices))
    np.testing.assert_array_equal(same.weight, build_collisions(mesh, x, 1e-3).weight)


def test_surface_modulus_and_softer_side_kappa():
    tets = np.array([[0, 1, 2, 3], [1, 2, 3, 4], [5, 6, 7, 8]])
    young = np.array([1e8, 1e4, 1e6])
    nodes = np.array([[0, 0], [4, 4], [1, 0], [9, 9], [5, 6]])
    weights = np.array([[1.0, 0.0], [1.0, 0.0], [0.5, 0.5], [1.0, 0.0], [0.0, 1.0]])
    e = surface_youngs_modulus(tets, young, 10, nodes, weights)
    # node 0: 1e8 only; node 4: 1e4; node 1 touches both tets -> 1e4; node 9: no tet (obstacle) -> inf; node 6: 1e6
    np.testing.assert_array_equal(e, [1e8, 1e4, 1e4, np.inf, 1e6])
    kappa, rel = softer_side_stiffness(e)
    assert kappa == pytest.approx(1e7)
    np.testing.assert_allclose(rel, [1.0, 1e-4, 1e-4, np.inf, 1e-2])
    kappa, rel = softer_side_stiffness(np.array([2e5, 2e5, np.inf]))
    assert kappa == pytest.approx(2e4) and rel is None  # one material: one kappa, as before
    with pytest.raises(ValueError, match="no collision vertex"):
        softer_side_stiffness(np.array([np.inf]))


@pytest.mark.parametrize("method", ["cell_join", "brute_force"])
def test_self_contact_off_drops_the_pairs_within_a_body_only(method):
    """Two overlapping sheets of ONE body: with self contact off no pair is left; the same sheets as two bodies
    keep every pair; a plane keeps its vertices either way."""
    gap = 2e-4
    one = _two_sheets(gap, bodies=(0, 0))
    both = build_candidates(one, one.rest_positions, inflation_radius=1e-3, method=method)
    assert len(both.vf) and len(both.ee)
    one.self_contact = np.array([False])
    assert len(build_candidates(one, one.rest_positions, inflation_radius=1e-3, method=method)) == 0
    two = _two_sheets(gap, bodies=(0, 1))
    sheet_of = {"vf": (lambda v: two.body[v], lambda f: two.body[two.faces[f, 0]]),
                "ee": (lambda e: two.body[two.edges[e, 0]],) * 2}
    for off, expect_kept in (((False, False), lambda a, b: a != b), ((True, False), lambda a, b: a != b or a == 0)):
        two.self_contact = np.array(off)
        kept = build_candidates(two, two.rest_positions, inflation_radius=1e-3, method=method).as_sets()
        for kind, (first, second) in sheet_of.items():  # the naive rule, pair by pair
            expected = {p for p in both.as_sets()[kind] if expect_kept(first(p[0]), second(p[1]))}
            assert kept[kind] == expected and expected


def test_self_contact_off_keeps_plane_pairs():
    from ipcsim.geometry.collision_mesh import Plane

    one = _two_sheets(2e-4, bodies=(0, 0))
    one.planes = [Plane((0.0, 0.0, -1e-4), (0.0, 0.0, 1.0))]
    one.self_contact = np.array([False])
    c = build_candidates(one, one.rest_positions, inflation_radius=1e-3)
    assert len(c.pv) == one.n_vertices and len(c.vf) == len(c.ee) == 0
