"""Embedded IPC's geometry: point location and the embedding x = J q (shared faces, edges and corners get one
deterministic tet, points outside get extrapolated weights and are reported), and voxel cages around the teddy
(counts, quality, every fine vertex inside, rest maps to rest)."""
import numpy as np
import pytest

from ipcsim.geometry import boundary_faces, load_tet_mesh, tet_signed_volumes
from ipcsim.geometry.embedding import embed_points, point_tet_distance
from ipcsim.geometry.voxel_cage import (cage_for_vertex_count, clearance, fine_surface, radius_ratio,
                                        volume_samples, voxel_cage)
from ipcsim.model import box_tet_mesh

#: Cell sizes [m] of the teddy's cages (0.105 x 0.154 x 0.122 m): "medium" ~ 170 vertices, "low" ~ 34.
CELL = {"medium": 0.027, "low": 0.065}


@pytest.fixture(scope="module")
def teddy(shared_data):
    v, t = load_tet_mesh(shared_data / "meshes" / "teddy" / "teddy.vtk")
    return v, t, volume_samples(v, t)


def _containing(points, v, t, tol=1e-12):
    """Brute force: the lowest index of a tet holding each point (-1: none)."""
    c = v[t]
    edges = (c[:, 1:] - c[:, :1]).transpose(0, 2, 1)
    local = np.linalg.solve(edges[None], (points[:, None] - c[None, :, 0])[..., None])[..., 0]
    w = np.concatenate([1 - local.sum(-1, keepdims=True), local], -1)
    inside = w.min(-1) >= -tol
    return np.where(inside.any(1), inside.argmax(1), -1), inside.sum(1)


def test_points_on_shared_faces_edges_and_corners_get_the_lowest_holding_tet():
    v, t = box_tet_mesh((1.0, 1.0, 1.0), (2, 2, 2))
    g = np.linspace(0.0, 1.0, 5)  # grid corners, edge midpoints, face centres and cell centres
    points = np.stack(np.meshgrid(g, g, g, indexing="ij"), -1).reshape(-1, 3)
    jmap, report = embed_points(points, v, t)
    expected, holders = _containing(points, v, t)
    tets_of = {tuple(sorted(row)): e for e, row in enumerate(t)}
    chosen = np.array([tets_of[tuple(sorted(row))] for row in jmap.nodes])
    np.testing.assert_array_equal(chosen, expected)
    assert report.n_shared == np.count_nonzero(holders > 1) > 0 and report.n_outside == 0
    np.testing.assert_allclose(jmap.apply(v), points, rtol=0, atol=1e-15)
    again, _ = embed_points(points[::-1], v, t)  # the choice does not depend on the order of the points
    np.testing.assert_array_equal(again.nodes[::-1], jmap.nodes)


def test_points_outside_get_extrapolated_weights_and_are_reported():
    v, t = box_tet_mesh((1.0, 1.0, 1.0), (2, 2, 2))
    points = np.array([[1.003, 0.3, 0.6], [0.4, -0.01, 0.7], [0.5, 0.5, 0.5], [1.002, 1.002, 1.002]])
    jmap, report = embed_points(points, v, t)
    np.testing.assert_allclose(jmap.apply(v), points, rtol=0, atol=1e-15)
    assert report.n_outside == 3
    assert report.max_distance_outside == pytest.approx(0.01, rel=1e-9)  # distances 0.003, 0.01, sqrt(3) 0.002
    assert report.min_weight < 0
    # the chosen tet is a nearest one
    d = point_tet_distance(points, v[jmap.nodes])
    for p, dp in zip(points, d):
        assert dp == pytest.approx(point_tet_distance(np.broadcast_to(p, (len(t), 3)), v[t]).min(), abs=1e-15)


@pytest.mark.parametrize("level", ["medium", "low"])
def test_teddy_cage_maps_rest_to_rest_and_holds_every_fine_vertex(teddy, level):
    v, t, samples = teddy
    cv, ct, rep = voxel_cage(v, t, CELL[level], samples=samples)
    print(f"\nteddy {level}: {rep}")
    assert np.all(tet_signed_volumes(cv, ct) > 0) and rep.min_volume > 0
    assert rep.worst_radius_ratio == pytest.approx(radius_ratio(cv, ct).min()) and rep.worst_radius_ratio > 0.7
    target = {"medium": (170, 530), "low": (34, 61)}[level]
    assert abs(rep.n_vertices - target[0]) <= 0.25 * target[0] and abs(rep.n_tets - target[1]) <= 0.25 * target[1]
    assert len(np.unique(ct)) == len(cv)  # no unused vertex
    sv, _ = fine_surface(v, t)
    jmap, report = embed_points(v[sv], cv, ct)
    print(f"teddy {level} surface embedding: {report}")
    scale = np.abs(v).max()
    np.testing.assert_allclose(jmap.apply(cv), v[sv], rtol=0, atol=1e-12 * scale)
    assert report.n_outside == rep.n_outside
    if level == "low":  # every fine vertex strictly inside the cage
        assert rep.n_outside == 0 and rep.clearance > 0 and report.min_weight > 0
    else:  # a few surface vertices just outside: extrapolated and reported
        assert report.n_outside <= 5 and report.max_distance_outside < 0.1 * CELL[level]
        assert rep.clearance == pytest.approx(-report.max_distance_outside, rel=1e-9)
    # all fine vertices, interior ones included, map rest to rest
    jall, _ = embed_points(v, cv, ct)
    np.testing.assert_allclose(jall.apply(cv), v, rtol=0, atol=1e-12 * scale)


def test_cage_for_a_vertex_count(teddy):
    v, t, _ = teddy
    cv, ct, rep = cage_for_vertex_count(v, t, 34)
    print(f"\nteddy, 34 vertices asked: {rep}")
    assert abs(rep.n_vertices - 34) <= 10
    assert clearance(v[fine_surface(v, t)[0]], cv, ct) == pytest.approx(rep.clearance)


def test_cage_around_a_closed_triangle_surface(teddy):
    v, t, (points, volumes) = teddy
    faces = boundary_faces(v, t)
    tri_points, tri_volumes = volume_samples(v, faces)
    assert tri_volumes.sum() == pytest.approx(volumes.sum(), rel=1e-12)  # the enclosed volume
    cv, ct, rep = voxel_cage(v, faces, CELL["low"])
    assert rep.n_vertices > 10 and np.all(tet_signed_volumes(cv, ct) > 0)
    jmap, report = embed_points(v[np.unique(faces)], cv, ct)
    np.testing.assert_allclose(jmap.apply(cv), v[np.unique(faces)], rtol=0, atol=1e-12 * np.abs(v).max())


def test_long_prism_tets_and_one_huge_tet_locate_as_brute_force():
    """The candidate grid (``TetGrid``, cells of the median box size) on tets far from round: a FinRay cage of
    1.2 mm triangles extruded 20 mm (the plate-rack demo's), points inside, on its nodes and just outside; then a
    mesh with one tet 1000 times larger than the rest (the grid coarsens its cells)."""
    from ipcsim.geometry.embedding import TetLocator
    from ipcsim.geometry.finray import finray_cage

    cv, ct = finray_cage(resolution=0.0012, layers=1, rib_angle=np.radians(-15.0))
    rng = np.random.default_rng(3)
    inner = np.einsum("kc,kcd->kd", rng.dirichlet(np.ones(4), 300), cv[ct[rng.integers(0, len(ct), 300)]])
    points = np.concatenate([inner, cv[::7], cv[::11] + rng.normal(scale=1e-4, size=(len(cv[::11]), 3))])
    tet, w, dist, _ = TetLocator(cv, ct).locate(points)
    expected, _ = _containing(points, cv, ct, tol=1e-10)
    inside = expected >= 0
    np.testing.assert_array_equal(tet[inside], expected[inside])
    assert np.all(dist[inside] == 0) and np.all(dist[~inside] > 0) and np.count_nonzero(~inside) > 0
    v, t = box_tet_mesh((1.0, 1.0, 1.0), (4, 4, 4))
    big = np.array([[-1000.0, -1000.0, -1000.0], [3000.0, 0.0, 0.0], [0.0, 3000.0, 0.0], [0.0, 0.0, 3000.0]]) - 5.0
    v2, t2 = np.vstack([v, big]), np.vstack([t, [[len(v), len(v) + 1, len(v) + 2, len(v) + 3]]])
    pts = np.concatenate([rng.random((200, 3)), rng.random((50, 3)) * 50.0])
    tet2, _, _, _ = TetLocator(v2, t2).locate(pts)
    np.testing.assert_array_equal(tet2, _containing(pts, v2, t2, tol=1e-10)[0])
