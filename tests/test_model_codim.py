"""ModelBuilder: codimensional obstacles (edges, points) and Neumann loads given as accelerations."""
import numpy as np
import pytest

import ipctk
from ipcsim.contact.intersection import has_intersections
from ipcsim.model import ModelBuilder, box_tet_mesh
from ipcsim.solvers.integrator_solvers import ContactParameters, ImplicitEulerSolver

CUBE_V, CUBE_T = box_tet_mesh((0.2, 0.2, 0.2), (1, 1, 1))


def _cube_builder(**kw):
    b = ModelBuilder(**kw)
    b.add_body(CUBE_V, CUBE_T, translation=(-0.1, 0.0015, -0.1), youngs_modulus=1e6)
    return b


def test_edge_obstacle_collision_mesh():
    b = _cube_builder()
    v = np.array([[-1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 0.0, 1.0]])
    b.add_obstacle(v, [[0, 1], [2, 3]])
    model, state = b.finalize()
    mesh = model.collision_mesh
    obs = mesh.is_obstacle
    assert obs.sum() == 4 and not obs[mesh.faces].any()
    obs_edges = mesh.edges[obs[mesh.edges].all(axis=1)]
    np.testing.assert_array_equal(np.sort(mesh.full_vertex_index[obs_edges], axis=1), [[8, 9], [10, 11]])
    np.testing.assert_array_equal(state.x[8:], v)
    assert model.mass[8:].sum() == 0 and model.fixed[8:].all()


def test_point_obstacles_all_vertices_or_a_subset():
    v = np.array([[0.0, -0.5, 0.0], [0.3, -0.5, 0.0], [9.0, 9.0, 9.0]])
    for elements, expected in [(None, [8, 9, 10]), ([[1], [0]], [8, 9])]:
        b = _cube_builder()
        b.add_obstacle(v, elements)
        model, _ = b.finalize()
        mesh = model.collision_mesh
        idx = mesh.full_vertex_index[mesh.is_obstacle]
        assert sorted(idx.tolist()) == expected
        np.testing.assert_array_equal(mesh.rest_positions[mesh.is_obstacle], model.rest_positions[idx])
        assert not mesh.is_obstacle[mesh.edges].any()
    with pytest.raises(ValueError, match="elements must be"):
        _cube_builder().add_obstacle(v, np.zeros((2, 5), int))
    with pytest.raises(ValueError, match=r"indices must lie in 0..2"):
        _cube_builder().add_obstacle(v, [[0, 3]])


def test_cube_rests_on_crossed_segments_without_intersection():
    b = _cube_builder()
    v = np.array([[-0.5, 0.0, 0.0], [0.5, 0.0, 0.0], [0.0, 0.0, -0.5], [0.0, 0.0, 0.5]])
    v = v + [0.0, 0.0, 0.013]  # off the cube's diagonals: segments below face interiors
    b.add_obstacle(v, [[0, 1], [2, 3]])
    model, state = b.finalize()
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=1e-3))
    mesh = model.collision_mesh
    tk = ipctk.CollisionMesh(mesh.rest_positions, mesh.edges.astype(np.int32), mesh.faces.astype(np.int32))
    for _ in range(5):
        new = state.copy()
        stats = solver.step(state, new, None, 0.02)
        state = new
        xs = mesh.select_positions(state.x)
        assert not has_intersections(mesh, xs) and not ipctk.has_intersections(tk, xs)
    bottom = state.x[:8, 1].min()
    assert 0.0 < bottom < 1.5e-3  # held by the segments (free fall would reach y < -0.01)
    assert stats.n_contacts > 0 and stats.min_distance > 0


def test_neumann_acceleration_is_lumped_mass_times_acceleration():
    b = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    body = b.add_body(CUBE_V, CUBE_T, density=800.0)
    b.add_neumann(body, acceleration=(1.0, -2.0, 3.0), indices=[0, 1], time_range=(0.1, 0.3))
    b.add_neumann(body, (0.0, 5.0, 0.0), indices=[1])
    model, _ = b.finalize()
    f = model.control.external_forces(model.n_vertices, 0.2)
    np.testing.assert_allclose(f[0], model.mass[0] * np.array([1.0, -2.0, 3.0]), rtol=1e-15)
    np.testing.assert_allclose(f[1], model.mass[1] * np.array([1.0, -2.0, 3.0]) + [0.0, 5.0, 0.0], rtol=1e-15)
    assert not f[2:].any()
    np.testing.assert_array_equal(model.control.external_forces(model.n_vertices, 0.4)[1], [0.0, 5.0, 0.0])
    assert model.mass[0] != model.mass[1]  # the lumped masses differ, so do the forces
    with pytest.raises(ValueError, match="exactly one of force"):
        b.add_neumann(body, (1.0, 0.0, 0.0), acceleration=(1.0, 0.0, 0.0), indices=[0])
    with pytest.raises(ValueError, match="exactly one of force"):
        b.add_neumann(body, indices=[0])
