"""Exact edge-triangle intersection: predicates, mesh queries, messages; ipctk as the oracle."""
from __future__ import annotations

import itertools

import ipctk
import numpy as np
import pytest

from ipcsim.contact.broad_phase import cell_join
from ipcsim.contact.intersection import (
    IntersectionError,
    check_no_intersections,
    describe_intersection,
    edge_triangle_exact,
    edge_triangle_filtered,
    find_intersections,
    has_intersections,
    orient3d_filtered,
)
from ipcsim.geometry import CollisionMesh, load_tet_mesh


T = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
TINY = 2.0**-60

# (edge, expected) against the triangle T
SPECIAL = {
    "crossing the interior": (([0.2, 0.2, -1], [0.2, 0.2, 1]), True),
    "endpoint on the interior": (([0.2, 0.2, 0], [0.2, 0.2, 1]), True),
    "through a vertex": (([0, 0, -1], [0, 0, 1]), True),
    "through an edge": (([0.5, 0, -1], [0.5, 0, 1]), True),
    "through the hypotenuse": (([0.5, 0.5, -1], [0.5, 0.5, 1]), True),
    "just outside an edge": (([0.5, -TINY, -1], [0.5, -TINY, 1]), False),
    "just inside an edge": (([0.5, TINY, -1], [0.5, TINY, 1]), True),
    "endpoint just above": (([0.2, 0.2, TINY], [0.2, 0.2, 1]), False),
    "parallel above": (([0, 0, 1], [1, 0, 1]), False),
    "coplanar crossing": (([-1, 0.2, 0], [2, 0.2, 0]), True),
    "coplanar inside": (([0.1, 0.1, 0], [0.2, 0.1, 0]), True),
    "coplanar far": (([3, 3, 0], [4, 3, 0]), False),
    "coplanar touching a vertex": (([1, 0, 0], [2, 0, 0]), True),
    "coplanar along an edge": (([0.2, 0, 0], [0.7, 0, 0]), True),
    "coplanar collinear beyond": (([1.5, 0, 0], [2, 0, 0]), False),
    "coplanar crossing a corner region": (([0.6, 0.6, 0], [2, 2, 0]), False),
    "degenerate edge inside": (([0.2, 0.2, 0], [0.2, 0.2, 0]), True),
    "degenerate edge above": (([0.2, 0.2, 1], [0.2, 0.2, 1]), False),
}


@pytest.mark.parametrize("name", list(SPECIAL))
def test_special_configurations(name):
    (e0, e1), expected = SPECIAL[name]
    e0, e1 = np.array(e0, float), np.array(e1, float)
    # invariant under swapping the endpoints and permuting the triangle
    for a, b in ((e0, e1), (e1, e0)):
        for perm in itertools.permutations(range(3)):
            t = T[list(perm)]
            assert edge_triangle_exact(a, b, *t) == expected
            f = edge_triangle_filtered(a, b, *t)
            assert f == -1 or f == int(expected), "the float filter decided wrongly"


def test_degenerate_triangles():
    seg = np.array([[0.0, 0, 0], [1.0, 0, 0], [2.0, 0, 0]])  # collinear vertices
    assert edge_triangle_exact([1.5, -1, 0], [1.5, 1, 0], *seg)
    assert not edge_triangle_exact([1.5, -1, 1], [1.5, 1, 1], *seg)
    assert not edge_triangle_exact([3, -1, 0], [3, 1, 0], *seg)
    assert edge_triangle_exact([2, 0, 0], [3, 0, 0], *seg)  # collinear, touching at the end
    assert not edge_triangle_exact([2.5, 0, 0], [3, 0, 0], *seg)
    point = np.zeros((3, 3))
    assert edge_triangle_exact([-1, 0, 0], [1, 0, 0], *point)
    assert not edge_triangle_exact([-1, 1e-300, 0], [1, 1e-300, 0], *point)


def test_random_configurations_agree_with_ipctk():
    rng = np.random.default_rng(0)
    hits = 0
    for _ in range(3000):
        P = rng.normal(size=(5, 3))
        exact = edge_triangle_exact(*P)
        assert exact == ipctk.is_edge_intersecting_triangle(*P)
        f = edge_triangle_filtered(*P)
        assert f == -1 or f == int(exact)
        hits += exact
    assert 100 < hits < 2900


def cramer_exact(e0, e1, t0, t1, t2) -> bool:
    """Independent exact reference for a non-parallel edge: solve e0 + t (e1 - e0) = t0 + u (t1 - t0)
    + v (t2 - t0) in rationals (Cramer's rule) and check 0 <= t <= 1, u, v >= 0, u + v <= 1."""
    from fractions import Fraction

    e0, e1, t0, t1, t2 = ([Fraction(float(c)) for c in p] for p in (e0, e1, t0, t1, t2))
    M = [[t1[i] - t0[i], t2[i] - t0[i], e0[i] - e1[i]] for i in range(3)]
    b = [e0[i] - t0[i] for i in range(3)]

    def det(A):
        return (A[0][0] * (A[1][1] * A[2][2] - A[1][2] * A[2][1]) - A[0][1] * (A[1][0] * A[2][2] - A[1][2] * A[2][0])
                + A[0][2] * (A[1][0] * A[2][1] - A[1][1] * A[2][0]))

    D = det(M)
    assert D != 0
    u, v, t = (det([[b[i] if j == k else M[i][j] for j in range(3)] for i in range(3)]) / D for k in range(3))
    return u >= 0 and v >= 0 and u + v <= 1 and 0 <= t <= 1


def test_near_degenerate_configurations_are_exact():
    """Edges through or next to the triangle's edges, perturbed by a few ulps: compared with an
    independent rational solve. (ipctk 1.6.1's predicate is not exact here: it uses a floating-point
    solve after its orient3d gate and disagrees with the rational answer in about 1 case in 8.)"""
    rng = np.random.default_rng(1)
    ipctk_disagrees = 0
    for _ in range(400):
        t = rng.normal(size=(3, 3))
        w = rng.dirichlet([1, 1, 1])
        w[rng.integers(3)] = 0.0  # a point on an edge of the triangle
        w /= w.sum()
        p = w @ t
        n = np.cross(t[1] - t[0], t[2] - t[0])
        d = rng.normal(size=3) + n
        e0, e1 = p - d, p + d * rng.uniform(0.5, 2)
        e0 = e0 + rng.integers(-4, 5, 3) * np.spacing(e0)
        exact = edge_triangle_exact(e0, e1, *t)
        assert exact == cramer_exact(e0, e1, *t)
        ipctk_disagrees += exact != ipctk.is_edge_intersecting_triangle(e0, e1, *t)
    assert ipctk_disagrees < 100


def test_orient3d_filter_is_never_wrong():
    rng = np.random.default_rng(2)
    for _ in range(2000):
        a, b, c = rng.normal(size=(3, 3))
        d = a + rng.uniform() * (b - a) + rng.uniform() * (c - a)  # nearly coplanar
        d = d + rng.integers(-2, 3, 3) * np.spacing(d)
        s = orient3d_filtered(a, b, c, d)
        if s != 2:
            from fractions import Fraction

            A, B, C, D = ([Fraction(float(v)) for v in p] for p in (a, b, c, d))
            m = [[A[i] - D[i], B[i] - D[i], C[i] - D[i]] for i in range(3)]
            det = (m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
                   + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]))
            assert s == (det > 0) - (det < 0)


def two_bodies(V, T, shift) -> CollisionMesh:
    return CollisionMesh.concatenate(
        [CollisionMesh.from_tet_mesh(V, T, body=0), CollisionMesh.from_tet_mesh(V + shift, T, body=1)]
    )


def ipctk_pairs(mesh, x) -> set:
    """All edge-face pairs (no shared vertex) that ipctk's predicate reports, over our zero-inflation boxes."""
    elo, ehi = x[mesh.edges].min(1), x[mesh.edges].max(1)
    flo, fhi = x[mesh.faces].min(1), x[mesh.faces].max(1)
    no = np.zeros(len(mesh.edges), bool), np.zeros(len(mesh.faces), bool)
    pairs = cell_join.cell_pairs((elo, ehi, mesh.edges, no[0]), (flo, fhi, mesh.faces, no[1]), False)
    return {(e, f) for e, f in pairs.tolist()
            if ipctk.is_edge_intersecting_triangle(x[mesh.edges[e, 0]], x[mesh.edges[e, 1]], *x[mesh.faces[f]])}


@pytest.mark.parametrize("shift, overlapping", [(0.3, True), (0.6, True), (1.1, False)])
def test_bunny_pairs_agree_with_ipctk(shared_data, shift, overlapping):
    V, T = load_tet_mesh(shared_data / "ipc/input/tetMeshes/bunny.msh")
    mesh = two_bodies(V, T, [shift * np.ptp(V[:, 0]), 0.0, 0.0])
    x = mesh.rest_positions
    found = find_intersections(mesh, x)
    assert has_intersections(mesh, x) == overlapping == (len(found) > 0)
    cm = ipctk.CollisionMesh(x, mesh.edges.astype(np.int32), mesh.faces.astype(np.int32))
    assert ipctk.has_intersections(cm, x) == overlapping
    assert set(map(tuple, found.tolist())) == ipctk_pairs(mesh, x)


def test_single_bunny_has_no_self_intersection(shared_data):
    V, T = load_tet_mesh(shared_data / "ipc/input/tetMeshes/bunny.msh")
    mesh = CollisionMesh.from_tet_mesh(V, T)
    assert not has_intersections(mesh, mesh.rest_positions)


@pytest.mark.parametrize(
    "shift, expected",
    [((0.5, 0.0, 0.2), True), ((0.5, 0.3, 0.2), True), ((1.0, 0.3, 0.2), True),  # 1.0: faces touch
     ((1.0 + 1e-9, 0.3, 0.2), False), ((0.2, 0.2, 1.0 + 2.0**-40), False), ((0.0, 0.0, 0.0), True)],
)
def test_cube_pairs(shared_data, shift, expected):
    V, T = load_tet_mesh(shared_data / "ipc/input/tetMeshes/cube.msh")
    mesh = two_bodies(V, T, np.array(shift))
    x = mesh.rest_positions
    assert has_intersections(mesh, x) == expected
    cm = ipctk.CollisionMesh(x, mesh.edges.astype(np.int32), mesh.faces.astype(np.int32))
    assert ipctk.has_intersections(cm, x) == expected


def test_output_sorted_max_count_and_exclusions(shared_data):
    V, T = load_tet_mesh(shared_data / "ipc/input/tetMeshes/cube.msh")
    mesh = two_bodies(V, T, np.array([0.5, 0.3, 0.2]))
    x = mesh.rest_positions
    found = find_intersections(mesh, x)
    assert len(found) > 2
    np.testing.assert_array_equal(found, found[np.lexsort((found[:, 1], found[:, 0]))])
    np.testing.assert_array_equal(find_intersections(mesh, x, max_count=2), found[:2])
    for e, f in found:
        assert not set(mesh.edges[e]) & set(mesh.faces[f])
    # the same overlap between two obstacles is not reported
    both_obstacles = CollisionMesh.concatenate(
        [CollisionMesh.from_tet_mesh(V, T, is_obstacle=True),
         CollisionMesh.from_tet_mesh(V + [0.5, 0.3, 0.2], T, body=1, is_obstacle=True)])
    assert not has_intersections(both_obstacles, x)


def test_messages_name_the_primitives():
    V = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0.2, 0.2, -1], [0.2, 0.2, 1]], float)
    tri = CollisionMesh.from_triangle_mesh(V[:3], [[0, 1, 2]], body=0)
    rod = CollisionMesh.from_edges(V[3:], [[0, 1]], body=1)
    mesh = CollisionMesh.concatenate([tri, rod])
    found = find_intersections(mesh, mesh.rest_positions)
    assert found.tolist() == [[3, 0]]
    msg = describe_intersection(mesh, 3, 0)
    assert msg == "edge 3 (vertices 3, 4) of body 1 intersects face 0 (vertices 0, 1, 2) of body 0"
    with pytest.raises(IntersectionError, match=r"^edge 3 \(vertices 3, 4\) of body 1 intersects face 0"):
        check_no_intersections(mesh, mesh.rest_positions)
    x = mesh.rest_positions.copy()
    x[3:, 0] += 5.0
    check_no_intersections(mesh, x)


def test_bad_input():
    mesh = CollisionMesh.from_triangle_mesh(T, [[0, 1, 2]])
    with pytest.raises(ValueError, match="x must have shape"):
        find_intersections(mesh, np.zeros((4, 3)))
    with pytest.raises(ValueError, match="vertex 2 has a non-finite"):
        has_intersections(mesh, np.array([[0, 0, 0], [1, 0, 0], [np.inf, 0, 0]]))
    with pytest.raises(ValueError, match="max_count"):
        find_intersections(mesh, T, max_count=0)


def test_projection_separation_filter_is_never_wrong():
    """The orient2d separation shortcut only ever answers 'disjoint' for pairs the exact test calls disjoint,
    on grid-snapped, coplanar and nearly coplanar configurations (where the orient3d filter is undecided)."""
    from ipcsim.contact.intersection import edge_triangle_exact, separated_in_projection

    rng = np.random.default_rng(11)
    n_sep = 0
    for trial in range(6000):
        pts = rng.integers(-3, 4, size=(5, 3)).astype(float) * 0.25
        if trial % 3 == 1:
            pts[:, trial % 3] = 0.5  # all five points in one axis-aligned plane
        elif trial % 3 == 2:
            pts[:, 1] = 0.5 + rng.normal(scale=1e-17, size=5)  # nearly coplanar
        e0, e1, t0, t1, t2 = pts
        if separated_in_projection(e0, e1, t0, t1, t2):
            n_sep += 1
            assert not edge_triangle_exact(e0, e1, t0, t1, t2), pts
    assert n_sep > 1000  # the shortcut does decide many of them


def test_flat_mat_at_rest_is_decided_without_exact_arithmetic(shared_data):
    """mat20x20's flat faces leave all its 6,572 candidate pairs undecided by the orient3d filter (measured); the
    projection shortcut decides nearly all of them, so few reach the rational-arithmetic stage (152 measured), and
    the answer (no intersection) is unchanged."""
    from ipcsim.contact import intersection as inter

    v, t = load_tet_mesh(shared_data / "ipc/input/tetMeshes/mat20x20.msh")
    mesh = CollisionMesh.from_tet_mesh(v, t)
    x = mesh.rest_positions
    assert not has_intersections(mesh, x)
    calls = []
    exact = inter.edge_triangle_exact
    inter.edge_triangle_exact = lambda *a: calls.append(1) or exact(*a)
    try:
        assert len(find_intersections(mesh, x)) == 0
    finally:
        inter.edge_triangle_exact = exact
    assert len(calls) < 300, len(calls)
