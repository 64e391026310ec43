"""Collision-free step size over whole meshes, checked against ipctk (Tight-Inclusion verification and
ipctk's own AdditiveCCD step size)."""
from __future__ import annotations

import math

import ipctk
import numpy as np
import pytest

import ipcsim.contact.ccd as ccd
from ipcsim.contact.broad_phase import build_candidates
from ipcsim.contact.ccd import candidate_stencils
from ipcsim.contact.collisions_data import EE, EV, FV, VV
from ipcsim.geometry.collision_mesh import CollisionMesh, Plane
from ipcsim.geometry.mesh_io import load_tet_mesh


def tet_body(shared_data, name, body):
    v, t = load_tet_mesh(shared_data / "ipc" / "input" / "tetMeshes" / f"{name}.msh")
    return CollisionMesh.from_tet_mesh(v, t, body=body)


def moved(mesh, rotation, translation):
    """The same mesh with rest positions rotated about their centroid and translated."""
    c = mesh.rest_positions.mean(axis=0)
    v = (mesh.rest_positions - c) @ rotation.T + c + translation
    return CollisionMesh(v, mesh.faces, mesh.edges, mesh.face_edges, mesh.full_vertex_index, mesh.body,
                         mesh.is_obstacle)


def random_rotation(rng, max_angle):
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    angle = rng.uniform(-max_angle, max_angle)
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + math.sin(angle) * k + (1 - math.cos(angle)) * k @ k


def rigid_motion(x, rotation, translation):
    c = x.mean(axis=0)
    return (x - c) @ rotation.T + c + translation


def sheet(n, size=1.0, y=0.0):
    """An n x n vertex grid in the plane at height y, triangulated: (vertices (n*n, 3), faces)."""
    s = np.linspace(-size / 2, size / 2, n)
    X, Z = np.meshgrid(s, s, indexing="ij")
    v = np.stack([X.ravel(), np.full(n * n, y), Z.ravel()], axis=1)
    idx = np.arange(n * n).reshape(n, n)
    a, b, c, d = idx[:-1, :-1].ravel(), idx[1:, :-1].ravel(), idx[1:, 1:].ravel(), idx[:-1, 1:].ravel()
    f = np.concatenate([np.stack([a, b, c], 1), np.stack([a, c, d], 1)])
    return v, f


def ipctk_mesh(mesh):
    e = mesh.edges.astype(np.int32) if mesh.n_edges else np.zeros((0, 2), np.int32)
    f = mesh.faces.astype(np.int32) if mesh.n_faces else np.zeros((0, 3), np.int32)
    return ipctk.CollisionMesh(np.asfortranarray(mesh.rest_positions), np.asfortranarray(e), np.asfortranarray(f))


def check_against_ipctk(mesh, x0, x1, min_distance=0.0):
    """Our step size; asserts ipctk finds no collision at it and that it is >= 0.8 x ipctk's ACCD step."""
    alpha = ccd.compute_collision_free_stepsize(mesh, x0, x1, min_distance=min_distance)
    assert 0.0 <= alpha <= 1.0
    im = ipctk_mesh(mesh)
    f0, f1 = np.asfortranarray(x0), np.asfortranarray(x1)
    ipc_alpha = ipctk.compute_collision_free_stepsize(im, f0, f1, min_distance=min_distance,
                                                      narrow_phase_ccd=ipctk.AdditiveCCD())
    xa = np.asfortranarray(x0 + alpha * (x1 - x0))
    assert ipctk.is_step_collision_free(im, f0, xa, min_distance=min_distance)
    assert alpha >= 0.8 * ipc_alpha
    return alpha, ipc_alpha


def serial_reference(mesh, x0, x1, candidates, min_distance=0.0):
    """min(1, every candidate's own time of impact) with the public single-pair functions (no pruning)."""
    kinds, stencils, pv = candidate_stencils(mesh, candidates)
    fns = {FV: ccd.point_triangle_toi, EE: ccd.edge_edge_toi, EV: ccd.point_edge_toi, VV: ccd.point_point_toi}
    sizes = {FV: 4, EE: 4, EV: 3, VV: 2}
    alpha = 1.0
    for kind, v in zip(kinds, stencils):
        if kind < 0:  # adjacent primitives
            assert len(set(v.tolist()) - {-1}) < np.count_nonzero(v >= 0)
            continue
        v = v[: sizes[kind]]
        alpha = min(alpha, fns[kind](x0[v], x1[v], min_distance))
    origins, normals = mesh.planes_array()
    for p, v in pv:
        alpha = min(alpha, ccd.point_plane_toi(x0[v], x1[v], origins[p], normals[p], min_distance))
    return alpha


# ----------------------------------------------------------------------------- scenes
def test_cube_into_cube(shared_data):
    a = tet_body(shared_data, "cube", 0)
    b = moved(a, np.eye(3), [0.2, 1.5, 0.1])
    mesh = CollisionMesh.concatenate([a, b])
    x0 = mesh.rest_positions
    x1 = x0.copy()
    x1[a.n_vertices:, 1] -= 1.0  # the gap of 0.5 closes at t = 0.5
    alpha, ipc_alpha = check_against_ipctk(mesh, x0, x1)
    assert 0.8 * 0.5 <= alpha < 0.5
    # the full step is not collision free, so the test is not vacuous
    assert not ipctk.is_step_collision_free(ipctk_mesh(mesh), np.asfortranarray(x0), np.asfortranarray(x1))
    # with min_distance
    check_against_ipctk(mesh, x0, x1, min_distance=0.05)


@pytest.mark.parametrize("seed", range(4))
def test_random_rigid_motions_sphere(shared_data, seed):
    rng = np.random.default_rng(100 + seed)
    a = tet_body(shared_data, "sphere1K", 0)
    direction = rng.normal(size=3)
    direction /= np.linalg.norm(direction)
    b = moved(a, random_rotation(rng, math.pi), 1.1 * direction)  # spheres of diameter 1, gap 0.1
    mesh = CollisionMesh.concatenate([a, b])
    x0 = mesh.rest_positions
    x1 = x0.copy()
    n = a.n_vertices
    x1[:n] = rigid_motion(x0[:n], random_rotation(rng, 0.5), rng.normal(0, 0.05, 3) + 0.2 * direction)
    x1[n:] = rigid_motion(x0[n:], random_rotation(rng, 0.5), rng.normal(0, 0.05, 3) - 0.2 * direction)
    alpha, ipc_alpha = check_against_ipctk(mesh, x0, x1)
    assert alpha < 1.0


def test_bunny_falling_onto_bunny(shared_data):
    rng = np.random.default_rng(3)
    a = tet_body(shared_data, "bunny", 0)
    b = moved(a, random_rotation(rng, 0.3), [0.3, 3.2, 0.1])
    mesh = CollisionMesh.concatenate([a, b])
    x0 = mesh.rest_positions
    x1 = x0.copy()
    x1[a.n_vertices:] = rigid_motion(x0[a.n_vertices:], random_rotation(rng, 0.2), [0.0, -1.5, 0.0])
    alpha, _ = check_against_ipctk(mesh, x0, x1)
    assert alpha < 1.0


@pytest.mark.parametrize("min_distance", [0.0, 1e-3])
def test_sheet_falling_onto_sheet(min_distance):
    v, f = sheet(25)
    bottom = CollisionMesh.from_triangle_mesh(v, f, body=0)
    top = CollisionMesh.from_triangle_mesh(v @ random_rotation(np.random.default_rng(5), 0.05).T + [0.01, 0.05, 0.0],
                                           f, body=1)
    mesh = CollisionMesh.concatenate([bottom, top])
    x0 = mesh.rest_positions
    x1 = x0.copy()
    x1[bottom.n_vertices:, 1] -= 0.1
    x1[: bottom.n_vertices, 1] += 0.02 * np.sin(7 * x0[: bottom.n_vertices, 0])  # the bottom one ripples
    alpha, _ = check_against_ipctk(mesh, x0, x1, min_distance=min_distance)
    assert alpha < 1.0


def test_codimensional_rods_and_points():
    rng = np.random.default_rng(11)
    # crossing rods (edge-edge) and particles falling onto a rod (edge-vertex) and onto each other (vertex-vertex)
    rod_v = np.array([[-1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.3, -1.0], [0.0, 0.3, 1.0]])
    rods = CollisionMesh.from_edges(rod_v, [[0, 1], [2, 3]], body=0)
    pts = CollisionMesh.from_points(np.array([[0.5, 0.5, 0.0], [0.5, 0.9, 0.0], [-0.5, 0.6, 0.02]]), body=1)
    mesh = CollisionMesh.concatenate([rods, pts])
    x0 = mesh.rest_positions
    for _ in range(5):
        x1 = x0 + rng.normal(0.0, 0.02, x0.shape)
        x1[2:4, 1] -= 0.6  # rod b sweeps through rod a
        x1[4:, 1] -= rng.uniform(0.3, 1.0, 3)
        alpha, _ = check_against_ipctk(mesh, x0, x1)
        assert alpha < 1.0


def test_cube_falling_onto_plane(shared_data):
    cube = tet_body(shared_data, "cube", 0)  # [0, 1]^3
    cube.planes.append(Plane(origin=np.array([0.0, -0.5, 0.0]), normal=np.array([0.0, 1.0, 0.0])))
    x0 = cube.rest_positions
    x1 = x0.copy()
    x1[:, 1] -= 1.0  # the bottom face reaches y = -0.5 at t = 0.5
    alpha = ccd.compute_collision_free_stepsize(cube, x0, x1)
    assert 0.8 * 0.5 <= alpha < 0.5
    assert (x0 + alpha * (x1 - x0))[:, 1].min() > -0.5
    assert ccd.compute_collision_free_stepsize(cube, x0, x0 + [3.0, 0.4, 0.0]) == 1.0  # moving away


def test_nothing_collides_and_touching(shared_data):
    a = tet_body(shared_data, "cube", 0)
    b = moved(a, np.eye(3), [3.0, 0.0, 0.0])
    mesh = CollisionMesh.concatenate([a, b])
    x0 = mesh.rest_positions
    assert ccd.compute_collision_free_stepsize(mesh, x0, x0) == 1.0
    assert ccd.compute_collision_free_stepsize(mesh, x0, x0 + [0.0, 5.0, 0.0]) == 1.0  # rigid translation
    x1 = x0.copy()
    x1[a.n_vertices:, 0] -= 1.0  # stops 1 away
    assert ccd.compute_collision_free_stepsize(mesh, x0, x1) == 1.0
    # touching at t = 0 (cube b's face on cube a's face) and moving on: 0
    c = moved(a, np.eye(3), [1.0, 0.0, 0.0])
    mesh = CollisionMesh.concatenate([a, c])
    x0 = mesh.rest_positions
    x1 = x0.copy()
    x1[a.n_vertices:, 0] -= 0.5
    assert ccd.compute_collision_free_stepsize(mesh, x0, x1) == 0.0


def test_pruned_parallel_minimum_equals_serial_minimum(shared_data):
    rng = np.random.default_rng(21)
    a = tet_body(shared_data, "sphere1K", 0)
    b = moved(a, random_rotation(rng, 1.0), [0.0, 1.05, 0.0])
    mesh = CollisionMesh.concatenate([a, b])
    x0 = mesh.rest_positions
    x1 = x0 + rng.normal(0.0, 0.01, x0.shape)
    x1[a.n_vertices:, 1] -= 0.3
    for min_distance in (0.0, 0.01):
        cand = build_candidates(mesh, x0, x1, inflation_radius=0.5 * min_distance)
        alpha = ccd.compute_collision_free_stepsize(mesh, x0, x1, cand, min_distance=min_distance)
        assert alpha == serial_reference(mesh, x0, x1, cand, min_distance)
        assert alpha == ccd.compute_collision_free_stepsize(mesh, x0, x1, min_distance=min_distance)
        assert alpha < 1.0


def test_bad_input(shared_data):
    mesh = tet_body(shared_data, "cube", 0)
    x0 = mesh.rest_positions
    with pytest.raises(ValueError, match="x1"):
        ccd.compute_collision_free_stepsize(mesh, x0, x0[:-1])
    with pytest.raises(ValueError, match="x0"):
        ccd.compute_collision_free_stepsize(mesh, np.full_like(x0, np.nan), x0)
    with pytest.raises(ValueError, match="min_distance"):
        ccd.compute_collision_free_stepsize(mesh, x0, x0, min_distance=-1.0)
    with pytest.raises(ValueError, match="mesh"):
        ccd.compute_collision_free_stepsize(object(), x0, x0)
    cand = build_candidates(mesh, x0, x0)
    assert ccd.compute_collision_free_stepsize(mesh, x0, x0, cand) == 1.0  # checked, and the check kept
    cand.vf = np.array([[0, 99]])  # a new array: checked again
    with pytest.raises(ValueError, match=r"candidates.vf\[0\].*face"):
        ccd.compute_collision_free_stepsize(mesh, x0, x0, cand)
    cand = build_candidates(mesh, x0, x0)
    ccd.compute_collision_free_stepsize(mesh, x0, x0, cand)
    small = CollisionMesh.from_triangle_mesh(mesh.rest_positions[:4], np.array([[0, 1, 2], [0, 2, 3]]))
    with pytest.raises(ValueError, match=r"candidates\.\w+\[\d+\]"):  # another mesh's sizes: checked again
        ccd.compute_collision_free_stepsize(small, x0[:4], x0[:4], cand)


def test_every_candidate_kind_and_chunking_match_the_reference(shared_data):
    """Each candidate array alone and all four at once, adjacent pairs included (skipped), cut into chunks that
    straddle the arrays' boundaries: the kernel's pruned minimum is the unpruned per-pair minimum."""
    from ipcsim.contact.broad_phase.candidates import Candidates
    from ipcsim.contact.ccd.stepsize import chunks_toi, earliest_candidate_toi

    rng = np.random.default_rng(5)
    cube = tet_body(shared_data, "cube", 0)
    rods = CollisionMesh.from_edges(np.array([[-0.5, 1.2, 0.5], [1.5, 1.2, 0.5], [0.5, 1.4, -0.5],
                                              [0.5, 1.4, 1.5]]), [[0, 1], [2, 3]], body=1)
    pts = CollisionMesh.from_points(np.array([[0.5, 1.8, 0.5], [0.52, 2.3, 0.5], [0.5, 1.5, 0.52]]), body=2)
    mesh = CollisionMesh.concatenate([cube, rods, pts])
    nv, codim = mesh.n_vertices, np.arange(cube.n_vertices, mesh.n_vertices)
    pairs = lambda a, b: np.array([(i, j) for i in a for j in b], np.int64).reshape(-1, 2)
    every = dict(vf=pairs(range(nv), range(mesh.n_faces)),
                 ee=np.array([(a, b) for a in range(mesh.n_edges) for b in range(a + 1, mesh.n_edges)]),
                 ev=pairs(range(mesh.n_edges), codim), vv=pairs(codim, codim))
    kinds, _, _ = candidate_stencils(mesh, Candidates(**every))
    assert (kinds < 0).any() and {FV, EE, EV, VV} <= set(kinds.tolist())
    faces, edges = (np.ascontiguousarray(mesh.faces, np.int64), np.ascontiguousarray(mesh.edges, np.int64))
    x0 = mesh.rest_positions
    # rod b falls through rod a into the cube, point 1 past point 0, point 2 through both rods into the cube
    fall = np.r_[np.zeros(cube.n_vertices), 0.1, 0.1, 0.5, 0.5, 0.2, 1.0, 0.6]
    for _ in range(3):
        x1 = x0 + rng.normal(0.0, 0.002, x0.shape)
        x1[:, 1] -= fall
        for chosen in (["vf"], ["ee"], ["ev"], ["vv"], list(every)):
            cand = Candidates(**{k: every[k] for k in chosen})
            ref = serial_reference(mesh, x0, x1, cand, 0.05)
            assert ref < 1.0, chosen
            args = (cand.vf, cand.ee, cand.ev, cand.vv, faces, edges, x0, x1, 0.05, ccd.CONSERVATIVE_RESCALING,
                    ccd.MAX_ITERATIONS)
            for n_chunks in (1, 3, 7):
                assert earliest_candidate_toi.serial(*args, n_chunks, 1.0) == ref
                best = np.full(n_chunks, 1.0)
                chunks_toi(0, 1, *args, best)
                assert best.min() == ref
