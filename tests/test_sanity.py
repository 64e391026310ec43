"""Scene checks before the first step (ipcsim.model.sanity)."""
import warnings

import numpy as np
import pytest

from ipcsim.model import ModelBuilder, box_tet_mesh
from ipcsim.model.sanity import SanityWarning, check_scene


def _cube_scene(second=None, ground=None):
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (1, 1, 1))
    b = ModelBuilder()
    b.add_body(v, t)
    if second is not None:
        b.add_body(v, t, translation=second)
    if ground is not None:
        b.add_ground(ground)
    return b.finalize()


def test_clean_scene_passes_without_warnings(recwarn):
    model, state = _cube_scene(second=(0.2, 0.0, 0.0), ground=-0.01)
    report = check_scene(model, state, dhat=1e-3)
    assert report.ok and not report.warnings
    assert not [w for w in recwarn if issubclass(w.category, SanityWarning)]


def test_inverted_and_degenerate_tets_are_errors():
    model, state = _cube_scene()
    mirrored = state.copy()
    mirrored.x[:, 0] *= -1.0
    report = check_scene(model, mirrored, raise_on_error=False)
    assert len([e for e in report.errors if "inverted" in e and "body 0" in e]) == len(model.tets)
    flat = state.copy()
    flat.x[:, 1] *= 1e-9
    report = check_scene(model, flat, raise_on_error=False)
    assert any("degenerate" in e for e in report.errors)
    with pytest.raises(ValueError, match="inverted"):
        check_scene(model, mirrored)


def test_overlapping_bodies_are_named():
    model, state = _cube_scene(second=(0.05, 0.05, 0.05))
    with pytest.raises(ValueError, match=r"initial intersection: edge \d+ .* of body [01] intersects face \d+ .* "
                                         r"of body [01]"):
        check_scene(model, state)


def test_vertices_behind_a_plane_are_an_intersection():
    model, state = _cube_scene(ground=0.02)
    report = check_scene(model, state, raise_on_error=False)
    assert any("plane 0" in e and "body 0" in e for e in report.errors)


def test_non_manifold_obstacle_is_a_warning_naming_its_edge():
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (1, 1, 1))
    b = ModelBuilder()
    b.add_body(v, t, translation=(0.0, 2.0, 0.0))
    fan = np.array([[0, 0, 0], [1, 0, 0], [0, 0, 1], [0, 0, -1], [0, 1, 0]], float)
    b.add_obstacle(fan, [[0, 1, 2], [0, 3, 1], [1, 0, 4]])  # edge (0, 1) holds three faces
    model, state = b.finalize()
    with pytest.warns(SanityWarning, match=r"obstacle body 1 has 1 non-manifold edge\(s\) shared by more than two "
                                           r"faces: \d+ \(8, 9\) \(contact works on any triangle soup"):
        report = check_scene(model, state, dhat=1e-3)
    assert report.ok and len(report.warnings) == 1


def test_pinched_tet_body_warns_and_runs_intersection_free():
    """Two tets joined at one vertex (a pinched boundary) fall onto a ground plane and each other's faces near
    the joint: the scene is checked with a warning naming the vertex, and every frame is intersection-free."""
    import ipctk

    from ipcsim.solvers.integrator_solvers import ImplicitEulerSolver

    v = 0.1 * np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [-1, 0, 0], [0, -1, 0], [0, 0, -1]], float)
    b = ModelBuilder()
    b.add_body(v, np.array([[0, 1, 2, 3], [0, 4, 6, 5]]), translation=(0.0, 0.12, 0.0))
    b.add_ground(0.0)
    model, state = b.finalize()
    mesh = model.collision_mesh
    pinch = int(np.flatnonzero(mesh.full_vertex_index == 0)[0])
    with pytest.warns(SanityWarning, match=rf"body 0 has 1 pinched vertex\(es\) whose faces form separate fans: "
                                           rf"{pinch} \(parts of the body meet only there"):
        report = check_scene(model, state, dhat=1e-3)
    assert report.ok
    solver = ImplicitEulerSolver(model)
    tk = ipctk.CollisionMesh(mesh.rest_positions, mesh.edges.astype(np.int32), mesh.faces.astype(np.int32))
    for _ in range(12):
        new = state.copy()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SanityWarning)
            assert solver.step(state, new, None, 0.02).converged
        state = new
        xs = model.surface_positions(state.x)
        assert not ipctk.has_intersections(tk, xs)
        assert xs[:, 1].min() > 0.0
    assert state.x[:, 1].min() < 0.01  # it reached the ground


def test_bodies_closer_than_dhat_warn():
    model, state = _cube_scene(second=(0.1005, 0.0, 0.0))
    with pytest.warns(SanityWarning, match=r"closer than dhat = 0.001 m \(closest 5.0\d*e-04 m\)"):
        report = check_scene(model, state, dhat=1e-3)
    assert report.ok and "bodies [0, 1]" in report.warnings[0]


def test_solver_checks_the_scene_before_its_first_step():
    from ipcsim.solvers.integrator_solvers import ImplicitEulerSolver

    model, state = _cube_scene(second=(0.05, 0.05, 0.05))
    with pytest.raises(ValueError, match="initial intersection"):
        ImplicitEulerSolver(model).step(state, state.copy(), None, 0.01)


def test_vertex_fans_detect_two_tets_touching_at_a_vertex():
    from ipcsim.model.sanity import non_manifold_vertices
    from ipcsim.geometry.collision_mesh import CollisionMesh

    v = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [-1, 0, 0], [0, -1, 0], [0, 0, -1]], float)
    tets = np.array([[0, 1, 2, 3], [0, 4, 6, 5]])  # share only vertex 0
    mesh = CollisionMesh.from_tet_mesh(v, tets)
    bad = non_manifold_vertices(mesh.faces, mesh.face_edges, mesh.n_vertices)
    assert bad.tolist() == [int(np.flatnonzero(mesh.full_vertex_index == 0)[0])]
    one = CollisionMesh.from_tet_mesh(*box_tet_mesh((1, 1, 1), (2, 2, 2)))
    assert len(non_manifold_vertices(one.faces, one.face_edges, one.n_vertices)) == 0
    # an open fan (a square of two triangles) is manifold too
    sq = CollisionMesh.from_triangle_mesh(v[:4] * [1, 1, 0] + [0, 0, 0], [[0, 1, 2], [1, 3, 2]])
    assert len(non_manifold_vertices(sq.faces, sq.face_edges, sq.n_vertices)) == 0
