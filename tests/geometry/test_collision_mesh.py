"""CollisionMesh: boundary extraction on the reference tet meshes, codimensional primitives, areas,
adjacencies and planes; ipctk's CollisionMesh as the oracle."""
from __future__ import annotations

import ipctk
import numpy as np
import pytest

from ipcsim.geometry import CollisionMesh, Plane, load_tet_mesh, tet_signed_volumes


TET_MESHES = ["bar-186", "bar-2523", "bar-6", "bunny", "cow_head", "cube", "mat20x20", "pyramid", "rod",
              "sphere1K", "tet-perp-edges", "tet-pyramid", "tet", "torus"]


def ipctk_mesh(mesh: CollisionMesh):
    return ipctk.CollisionMesh(mesh.rest_positions, mesh.edges.astype(np.int32), mesh.faces.astype(np.int32))


def as_set_of_sorted(rows) -> set:
    return {tuple(sorted(r)) for r in np.asarray(rows).tolist()}


@pytest.mark.parametrize("name", TET_MESHES)
def test_boundary_of_reference_tet_meshes(shared_data, name):
    V, T = load_tet_mesh(shared_data / f"ipc/input/tetMeshes/{name}.msh")
    mesh = CollisionMesh.from_tet_mesh(V, T)
    x, F, E = mesh.rest_positions, mesh.faces, mesh.edges
    np.testing.assert_array_equal(x, V[mesh.full_vertex_index])
    # outward: the signed volume enclosed by the surface equals the tets' total volume
    enclosed = np.einsum("ij,ij->i", x[F[:, 0]], np.cross(x[F[:, 1]], x[F[:, 2]])).sum() / 6.0
    np.testing.assert_allclose(enclosed, np.abs(tet_signed_volumes(V, T)).sum(), rtol=1e-9)
    assert enclosed > 0
    # closed 2-manifold: every edge in exactly two faces, seen once in each direction
    assert np.all(mesh.edge_face_adjacency.counts() == 2)
    directed = np.stack([F, np.roll(F, -1, axis=1)], axis=2).reshape(-1, 2)
    assert len({tuple(r) for r in directed.tolist()}) == len(directed)
    # face_edges: entry k is the edge (f[k], f[k+1])
    np.testing.assert_array_equal(np.sort(E[mesh.face_edges], axis=2), np.sort(directed.reshape(-1, 3, 2), axis=2))
    assert np.all(E[:, 0] < E[:, 1])
    # same counts and edge set as ipctk
    full_faces = mesh.full_vertex_index[F].astype(np.int32)
    cm = ipctk.CollisionMesh.build_from_full_mesh(V, ipctk.edges(full_faces), full_faces)
    assert (cm.num_vertices, cm.num_edges, cm.num_faces) == (mesh.n_vertices, mesh.n_edges, mesh.n_faces)
    assert as_set_of_sorted(ipctk.edges(F.astype(np.int32))) == as_set_of_sorted(E)
    assert len(mesh.codim_vertices) == 0 and len(mesh.codim_edges) == 0


def test_inverted_tets_still_give_outward_faces(shared_data):
    V, T = load_tet_mesh(shared_data / "ipc/input/tetMeshes/cube.msh")
    flipped = T.copy()
    flipped[::2] = flipped[::2][:, [1, 0, 2, 3]]
    a, b = CollisionMesh.from_tet_mesh(V, T), CollisionMesh.from_tet_mesh(V, flipped)

    def oriented(faces):  # each face rotated to start at its smallest index (keeps the orientation)
        return {tuple(np.roll(f, -int(np.argmin(f)))) for f in faces.tolist()}

    assert oriented(a.faces) == oriented(b.faces)


def mixed_mesh() -> CollisionMesh:
    """A closed tet surface, an open sheet (boundary), a rod (codim edges), points, an obstacle."""
    tet = CollisionMesh.from_tet_mesh(np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], float), [[0, 1, 2, 3]])
    g = np.linspace(0, 1, 4)
    X, Y = np.meshgrid(g, g, indexing="ij")
    Vs = np.stack([X.ravel() + 2, Y.ravel(), np.zeros(16)], axis=1)
    idx = np.arange(16).reshape(4, 4)
    a, b, c, d = idx[:-1, :-1].ravel(), idx[1:, :-1].ravel(), idx[1:, 1:].ravel(), idx[:-1, 1:].ravel()
    sheet = CollisionMesh.from_triangle_mesh(Vs, np.concatenate([np.stack([a, b, c], 1), np.stack([a, c, d], 1)]),
                                             body=1)
    rod = CollisionMesh.from_edges(np.array([[0, 0, 3], [0, 0, 4], [0, 0, 5.5]], float), [[0, 1], [1, 2]], body=2)
    pts = CollisionMesh.from_points(np.array([[5, 5, 5], [6, 5, 5]], float), body=3)
    ground = CollisionMesh.from_triangle_mesh(np.array([[-9, -9, -1], [9, -9, -1], [0, 9, -1]], float),
                                              [[0, 1, 2]], body=4, is_obstacle=True)
    plane = CollisionMesh.from_plane([0, 0, -2], [0, 0, 3])
    return CollisionMesh.concatenate([tet, sheet, rod, pts, ground, plane])


def test_codim_areas_and_adjacency_match_ipctk():
    mesh = mixed_mesh()
    cm = ipctk_mesh(mesh)
    np.testing.assert_array_equal(mesh.codim_vertices, cm.codim_vertices)
    np.testing.assert_array_equal(mesh.codim_edges, cm.codim_edges)
    np.testing.assert_allclose(mesh.vertex_areas, cm.vertex_areas, rtol=1e-14, atol=0)
    np.testing.assert_allclose(mesh.edge_areas, cm.edge_areas, rtol=1e-14, atol=0)
    for i in range(mesh.n_vertices):
        assert mesh.vertex_vertex_adjacency.row(i).tolist() == sorted(cm.vertex_vertex_adjacencies[i])
        assert mesh.vertex_edge_adjacency.row(i).tolist() == sorted(cm.vertex_edge_adjacencies[i])
        assert mesh.is_vertex_on_boundary[i] == cm.is_vertex_on_boundary(i)
    for e in range(mesh.n_edges):
        assert mesh.edge_vertex_adjacency.row(e).tolist() == sorted(cm.edge_vertex_adjacencies[e])
    # the rod and the points are codimensional, the sheet's border is boundary, the tet is closed
    assert mesh.codim_vertices.tolist() == [23, 24]
    assert len(mesh.codim_edges) == 2
    assert not mesh.is_vertex_on_boundary[:4].any() and mesh.is_interior_edge[mesh.face_edges[:4]].all()
    assert mesh.is_vertex_on_boundary[20:].all()


def test_areas_by_definition():
    mesh = mixed_mesh()
    x, F, E = mesh.rest_positions, mesh.faces, mesh.edges
    face_area = 0.5 * np.linalg.norm(np.cross(x[F[:, 1]] - x[F[:, 0]], x[F[:, 2]] - x[F[:, 0]]), axis=1)
    vf, ef = mesh.vertex_face_adjacency, mesh.edge_face_adjacency
    for v in range(mesh.n_vertices):
        if len(vf.row(v)):
            expected = face_area[vf.row(v)].sum() / 3
        elif len(mesh.vertex_edge_adjacency.row(v)):
            ids = mesh.vertex_edge_adjacency.row(v)
            expected = 0.5 * np.linalg.norm(x[E[ids, 1]] - x[E[ids, 0]], axis=1).sum()
        else:
            expected = 1.0
        assert mesh.vertex_areas[v] == pytest.approx(expected, rel=1e-14)
    for e in range(mesh.n_edges):
        expected = face_area[ef.row(e)].sum() / 3 if len(ef.row(e)) else np.linalg.norm(x[E[e, 1]] - x[E[e, 0]])
        assert mesh.edge_areas[e] == pytest.approx(expected, rel=1e-14)
    # the total vertex area of a closed surface is its area
    assert mesh.vertex_areas[:4].sum() == pytest.approx(face_area[:4].sum())


def test_face_adjacency_and_interior_edges_by_definition():
    mesh = mixed_mesh()
    for v in range(mesh.n_vertices):
        assert mesh.vertex_face_adjacency.row(v).tolist() == np.flatnonzero((mesh.faces == v).any(axis=1)).tolist()
    for e in range(mesh.n_edges):
        faces = np.flatnonzero((mesh.face_edges == e).any(axis=1))
        assert mesh.edge_face_adjacency.row(e).tolist() == faces.tolist()
        assert mesh.is_interior_edge[e] == (len(faces) >= 2)
    np.testing.assert_array_equal(mesh.is_interior_vertex, ~mesh.is_vertex_on_boundary)
    # sheet (vertices 4..19): inner edges interior, border edges not
    sheet_edges = np.flatnonzero((mesh.edges >= 4).all(axis=1) & (mesh.edges < 20).all(axis=1))
    assert 0 < mesh.is_interior_edge[sheet_edges].sum() < len(sheet_edges)


def test_obstacles_planes_and_concatenation():
    mesh = mixed_mesh()
    assert mesh.is_obstacle.sum() == 3 and mesh.face_is_obstacle.tolist()[-1] and not mesh.face_is_obstacle[:-1].any()
    assert mesh.edge_is_obstacle.sum() == 3
    origins, normals = mesh.planes_array()
    np.testing.assert_array_equal(origins, [[0, 0, -2]])
    np.testing.assert_array_equal(normals, [[0, 0, 1]])
    assert origins.flags.c_contiguous and normals.dtype == np.float64
    assert CollisionMesh.from_points(np.zeros((1, 3))).planes_array()[0].shape == (0, 3)
    np.testing.assert_array_equal(mesh.body, np.repeat([0, 1, 2, 3, 4], [4, 16, 3, 2, 3]))
    np.testing.assert_array_equal(mesh.full_vertex_index, np.arange(mesh.n_vertices))
    # concatenation shifts face_edges consistently
    np.testing.assert_array_equal(np.sort(mesh.edges[mesh.face_edges], axis=2),
                                  np.sort(np.stack([mesh.faces, np.roll(mesh.faces, -1, axis=1)], axis=2), axis=2))


def test_bad_input_errors():
    with pytest.raises(ValueError, match="plane normal"):
        Plane([0, 0, 0], [0, 0, 0])
    with pytest.raises(ValueError, match=r"tets\[1\] = \[0, 1, 2, 9\] refers to a vertex outside 0..3"):
        CollisionMesh.from_tet_mesh(np.eye(4, 3), [[0, 1, 2, 3], [0, 1, 2, 9]])
    with pytest.raises(ValueError, match="tets: the tet mesh has no tetrahedra"):
        CollisionMesh.from_tet_mesh(np.eye(4, 3), np.zeros((0, 4), int))
    with pytest.raises(ValueError, match="faces must have shape"):
        CollisionMesh.from_triangle_mesh(np.eye(3), [[0, 1]])
    with pytest.raises(ValueError, match="vertex 1 has a non-finite"):
        CollisionMesh.from_points([[0, 0, 0], [np.nan, 0, 0]])
