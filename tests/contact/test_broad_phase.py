"""Broad phase: the Numba hash grid against the brute-force reference, a naive Python loop, and ipctk."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from ipcsim.contact.broad_phase import Candidates, brute_force_candidates, build_candidates
from ipcsim.contact.broad_phase import cell_join
from ipcsim.geometry import CollisionMesh, load_tet_mesh

KINDS = ("vf", "ee", "ev", "vv", "pv")


# ---------------------------------------------------------------------------------------- helpers
def sheet(n: int, z: float, size: float = 1.0):
    g = np.linspace(0.0, size, n)
    X, Y = np.meshgrid(g, g, indexing="ij")
    V = np.stack([X.ravel(), Y.ravel(), np.full(n * n, z)], axis=1)
    idx = np.arange(n * n).reshape(n, n)
    a, b, c, d = idx[:-1, :-1].ravel(), idx[1:, :-1].ravel(), idx[1:, 1:].ravel(), idx[:-1, 1:].ravel()
    return V, np.concatenate([np.stack([a, b, c], 1), np.stack([a, c, d], 1)])


def two_sheets(n: int, gap: float) -> CollisionMesh:
    V0, F0 = sheet(n, 0.0)
    V1, F1 = sheet(n, gap)
    return CollisionMesh.concatenate(
        [CollisionMesh.from_triangle_mesh(V0, F0, body=0), CollisionMesh.from_triangle_mesh(V1, F1, body=1)]
    )


def random_soup(rng, n_tris=40, n_points=12, n_segments=10, obstacle_tris=10, planes=True) -> CollisionMesh:
    """Small random triangles, free points and segments (codimensional), some obstacles, planes."""
    parts = []
    for k, obst in ((n_tris, False), (obstacle_tris, True)):
        centers = rng.uniform(0, 1, (k, 3))
        V = (centers[:, None, :] + rng.normal(0, 0.06, (k, 3, 3))).reshape(-1, 3)
        F = np.arange(3 * k).reshape(-1, 3)
        # share some vertices: glue every other triangle to its predecessor
        F[1::2, 0] = F[0:-1:2, 1][: len(F[1::2])]
        parts.append(CollisionMesh.from_triangle_mesh(V, F, body=len(parts), is_obstacle=obst))
    parts.append(CollisionMesh.from_points(rng.uniform(0, 1, (n_points, 3)), body=len(parts)))
    c = rng.uniform(0, 1, (n_segments, 3))
    Vs = np.concatenate([c, c + rng.normal(0, 0.08, (n_segments, 3))])
    Es = np.stack([np.arange(n_segments), np.arange(n_segments) + n_segments], axis=1)
    Es[1::3, 1] = Es[0:-1:3, 1][: len(Es[1::3])]  # a few chains
    parts.append(CollisionMesh.from_edges(Vs, Es, body=len(parts)))
    parts.append(CollisionMesh.from_points(rng.uniform(0, 1, (4, 3)), body=len(parts), is_obstacle=True))
    if planes:
        parts.append(CollisionMesh.from_plane([0.0, 0.0, 0.05], [0.0, 0.0, 1.0]))
        parts.append(CollisionMesh.from_plane([0.5, 0.5, 0.5], [1.0, 1.0, 0.0]))
    return CollisionMesh.concatenate(parts)


def assert_same(a: Candidates, b: Candidates):
    for k in KINDS:
        np.testing.assert_array_equal(getattr(a, k), getattr(b, k), err_msg=f"{k} candidates differ")


def box_of(points, r):
    return points.min(axis=0) - r, points.max(axis=0) + r


def naive_candidates(mesh: CollisionMesh, x0, x1, r) -> dict[str, set]:
    """Definition of the candidate set, one pair at a time in plain Python."""
    x1 = x0 if x1 is None else x1
    pts = lambda ids: np.concatenate([x0[list(ids)], x1[list(ids)]])  # noqa: E731
    overlap = lambda A, B: bool(np.all(A[0] <= B[1]) and np.all(B[0] <= A[1]))  # noqa: E731
    obst = lambda ids: bool(np.all(mesh.is_obstacle[list(ids)]))  # noqa: E731
    vbox = [box_of(pts([v]), r) for v in range(mesh.n_vertices)]

    def union(ids):
        return np.min([vbox[i][0] for i in ids], axis=0), np.max([vbox[i][1] for i in ids], axis=0)

    out = {k: set() for k in KINDS}
    fbox = [union(f) for f in mesh.faces]
    ebox = [union(e) for e in mesh.edges]
    for v in range(mesh.n_vertices):
        for fi, f in enumerate(mesh.faces):
            if v not in f and not (obst([v]) and obst(f)) and overlap(vbox[v], fbox[fi]):
                out["vf"].add((v, fi))
    for a, b in itertools.combinations(range(mesh.n_edges), 2):
        ea, eb = mesh.edges[a], mesh.edges[b]
        if not set(ea) & set(eb) and not (obst(ea) and obst(eb)) and overlap(ebox[a], ebox[b]):
            out["ee"].add((a, b))
    cv, ce = mesh.codim_vertices, mesh.codim_edges
    for a, b in itertools.combinations(cv, 2):
        if not (obst([a]) and obst([b])) and overlap(vbox[a], vbox[b]):
            out["vv"].add((int(a), int(b)))
    for e in ce:
        for v in cv:
            if not (obst(mesh.edges[e]) and obst([v])) and overlap(ebox[e], vbox[v]):
                out["ev"].add((int(e), int(v)))
    for k, p in enumerate(mesh.planes):
        for v in range(mesh.n_vertices):
            lo, hi = vbox[v]
            corners = np.array(list(itertools.product(*zip(lo, hi))))
            d = (corners - p.origin) @ p.normal
            if not mesh.is_obstacle[v] and d.min() <= r and d.max() >= -r:
                out["pv"].add((k, v))
    return out


# ---------------------------------------------------------------------------------------- tests
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("moving", [False, True])
def test_random_soup_matches_naive_definition(seed, moving):
    rng = np.random.default_rng(seed)
    mesh = random_soup(rng, n_tris=14, n_points=8, n_segments=8, obstacle_tris=4)
    x0 = mesh.rest_positions
    x1 = x0 + rng.normal(0, 0.05, x0.shape) if moving else None
    r = 0.1
    fast = build_candidates(mesh, x0, x1, r)
    assert fast.as_sets() == naive_candidates(mesh, x0, x1, r)
    assert_same(fast, brute_force_candidates(mesh, x0, x1, r))
    assert len(fast.vf) and len(fast.ee) and len(fast.vv) and len(fast.ev) and len(fast.pv)


@pytest.mark.parametrize("seed", [2, 3, 4])
@pytest.mark.parametrize("r", [0.0, 1e-2, 5e-2])
def test_random_soup_grid_equals_brute_force(seed, r):
    rng = np.random.default_rng(seed)
    mesh = random_soup(rng, n_tris=150, n_points=40, n_segments=40, obstacle_tris=30)
    x0 = mesh.rest_positions
    for x1 in (None, x0 + rng.normal(0, 0.03, x0.shape)):
        fast = build_candidates(mesh, x0, x1, r, method="cell_join")
        assert_same(fast, brute_force_candidates(mesh, x0, x1, r))
        assert len(fast.ee) > 0


def test_rows_sorted_ordered_and_deterministic():
    rng = np.random.default_rng(7)
    mesh = random_soup(rng, n_tris=100)
    x = mesh.rest_positions
    a = build_candidates(mesh, x, None, 0.03)
    b = build_candidates(mesh, x.copy(), None, 0.03)
    assert_same(a, b)
    for k in KINDS:
        rows = getattr(a, k)
        assert rows.dtype == np.int64 and rows.shape[1] == 2
        order = np.lexsort((rows[:, 1], rows[:, 0]))
        np.testing.assert_array_equal(order, np.arange(len(rows)), err_msg=f"{k} rows not sorted")
        assert len(np.unique(rows, axis=0)) == len(rows), f"{k} has duplicate rows"
    assert np.all(a.ee[:, 0] < a.ee[:, 1]) and np.all(a.vv[:, 0] < a.vv[:, 1])


def test_exclusions_on_a_tiny_scene():
    # two triangles sharing edge (1, 2), an obstacle triangle right on top of them, an obstacle point
    V = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]], float)
    body = CollisionMesh.from_triangle_mesh(V, [[0, 1, 2], [1, 3, 2]])
    obst = CollisionMesh.from_triangle_mesh(V + [0, 0, 1e-3], [[0, 1, 2], [1, 3, 2]], is_obstacle=True)
    mesh = CollisionMesh.concatenate([body, obst])
    c = build_candidates(mesh, mesh.rest_positions, None, 1e-2)
    faces, edges = mesh.faces, mesh.edges
    for v, f in c.vf:
        assert v not in faces[f], "vertex paired with a face containing it"
        assert not (mesh.is_obstacle[v] and mesh.face_is_obstacle[f]), "obstacle-obstacle pair"
    for a, b in c.ee:
        assert not set(edges[a]) & set(edges[b]), "edges sharing a vertex"
        assert not (mesh.edge_is_obstacle[a] and mesh.edge_is_obstacle[b])
    vf = c.as_sets()["vf"]
    # body vertex 0 vs obstacle face 2 = (4, 5, 6) above it, obstacle vertex 4 vs body face 0: kept;
    # obstacle vertex 7 vs obstacle face 2 (overlapping boxes): left out
    assert (0, 2) in vf and (4, 0) in vf and (3, 0) in vf
    assert (7, 2) not in vf and not any(v >= 4 and f >= 2 for v, f in vf)


def test_codimensional_points_and_segments():
    rng = np.random.default_rng(11)
    pts = CollisionMesh.from_points(rng.uniform(0, 0.2, (30, 3)))
    seg_v = rng.uniform(0, 0.2, (20, 3))
    segs = CollisionMesh.from_edges(seg_v, np.arange(20).reshape(10, 2))
    mesh = CollisionMesh.concatenate([pts, segs])
    np.testing.assert_array_equal(mesh.codim_vertices, np.arange(30))
    np.testing.assert_array_equal(mesh.codim_edges, np.arange(10))
    c = build_candidates(mesh, mesh.rest_positions, None, 0.02)
    assert c.as_sets() == naive_candidates(mesh, mesh.rest_positions, None, 0.02)
    assert len(c.vv) and len(c.ev) and len(c.vf) == 0


def test_plane_vertex_candidates():
    x = np.array([[0.3, 0.2, 0.004], [0.1, 0.1, 0.5], [0.0, 0.0, -0.004], [0.0, 0.0, -0.5]])
    mesh = CollisionMesh.concatenate([CollisionMesh.from_points(x), CollisionMesh.from_plane([0, 0, 0], [0, 0, 2])])
    r = 0.005  # box within r of the plane: |z| - r <= r
    assert build_candidates(mesh, x, None, r).pv.tolist() == [[0, 0], [0, 2]]
    x1 = x.copy()
    x1[1, 2] = -0.4  # vertex 1 crosses the plane during the step
    assert build_candidates(mesh, x, x1, r).pv.tolist() == [[0, 0], [0, 1], [0, 2]]
    # obstacle vertices never pair with planes
    obst = CollisionMesh.concatenate(
        [CollisionMesh.from_points(x, is_obstacle=True), CollisionMesh.from_plane([0, 0, 0], [0, 0, 1])]
    )
    assert len(build_candidates(obst, x, None, r).pv) == 0


def test_sheets_equal_brute_force_static_and_trajectory():
    mesh = two_sheets(25, 0.5e-3)
    x0 = mesh.rest_positions
    rng = np.random.default_rng(5)
    x1 = x0 + rng.normal(0, 2e-3, x0.shape)
    for x1_ in (None, x1):
        fast = build_candidates(mesh, x0, x1_, 1e-3)
        assert_same(fast, brute_force_candidates(mesh, x0, x1_, 1e-3))
        assert len(fast.vf) > mesh.n_vertices  # every vertex sees the other sheet


def test_big_elements_and_big_queries_use_the_overflow_paths():
    # a huge obstacle ground made of two triangles under a fine sheet, and a few fast vertices
    ground = CollisionMesh.from_triangle_mesh(
        np.array([[-50, -50, -1e-3], [50, -50, -1e-3], [50, 50, -1e-3], [-50, 50, -1e-3]], float),
        [[0, 1, 2], [0, 2, 3]], is_obstacle=True)
    V, F = sheet(12, 0.0, size=0.2)
    mesh = CollisionMesh.concatenate([ground, CollisionMesh.from_triangle_mesh(V, F)])
    x0 = mesh.rest_positions
    x1 = x0.copy()
    x1[10:13] += [3.0, -2.0, 0.5]  # big trajectory boxes: query boxes covering many cells
    for x1_ in (None, x1):
        fast = build_candidates(mesh, x0, x1_, 2e-3, method="cell_join")
        assert_same(fast, brute_force_candidates(mesh, x0, x1_, 2e-3))
        assert any(f < 2 for _, f in fast.vf)


@pytest.mark.parametrize("threads", [1, 2])
def test_thread_count_does_not_change_result(threads, monkeypatch):
    rng = np.random.default_rng(13)
    mesh = random_soup(rng, n_tris=300)
    x = mesh.rest_positions
    ref = brute_force_candidates(mesh, x, None, 0.02)
    monkeypatch.setattr(cell_join, "THREADS", threads)
    assert_same(build_candidates(mesh, x, None, 0.02, method="cell_join"), ref)


def test_bad_input_raises_clear_errors():
    mesh = CollisionMesh.from_points(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="x0 must have shape"):
        build_candidates(mesh, np.zeros((2, 3)))
    with pytest.raises(ValueError, match="x1: vertex 1 has a non-finite"):
        build_candidates(mesh, np.zeros((3, 3)), np.array([[0, 0, 0], [np.nan, 0, 0], [0, 0, 0]]))
    with pytest.raises(ValueError, match="inflation_radius"):
        build_candidates(mesh, np.zeros((3, 3)), inflation_radius=-1.0)
    with pytest.raises(ValueError, match="method"):
        build_candidates(mesh, np.zeros((3, 3)), method="octree")


def test_empty_mesh_gives_empty_candidates():
    mesh = CollisionMesh.from_points(np.zeros((0, 3)))
    c = build_candidates(mesh, np.zeros((0, 3)), None, 1.0)
    assert len(c) == 0 and all(getattr(c, k).shape == (0, 2) for k in KINDS)


def test_bunny_vs_shifted_bunny(shared_data):
    V, T = load_tet_mesh(shared_data / "ipc/input/tetMeshes/bunny.msh")
    a = CollisionMesh.from_tet_mesh(V, T, body=0)
    b = CollisionMesh.from_tet_mesh(V + [0.3 * np.ptp(V[:, 0]), 0.0, 0.0], T, body=1)
    mesh = CollisionMesh.concatenate([a, b])
    x0 = mesh.rest_positions
    r = 1e-3 * mesh.bbox_diagonal()
    x1 = x0.copy()
    x1[: a.n_vertices] += [0.1 * np.ptp(V[:, 0]), 0.0, 0.0]
    for x1_ in (None, x1):
        fast = build_candidates(mesh, x0, x1_, r)
        assert_same(fast, brute_force_candidates(mesh, x0, x1_, r))
        vf = fast.as_sets()["vf"]
        assert any(mesh.body[v] != mesh.body[mesh.faces[f, 0]] for v, f in vf)  # the bunnies overlap
