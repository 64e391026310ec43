"""Static and kinematic obstacles, prescribed motions, the unknowns-to-surface map."""
import numpy as np
import pytest

import ipctk
from _tet_checks import count_inverted_tets
from ipcsim.geometry.mesh_io import read_mesh
from ipcsim.model import ModelBuilder, box_tet_mesh
from ipcsim.geometry.surface_map import SurfaceMap
from ipcsim.model.control import PrescribedMotion, rotation_matrix
from ipcsim.solvers.newton import free_coordinates
from ipcsim.solvers.integrator_solvers import ContactParameters, ImplicitEulerSolver


def _tk_mesh(mesh):
    return ipctk.CollisionMesh(mesh.rest_positions, mesh.edges.astype(np.int32), mesh.faces.astype(np.int32))


def _square(y=0.0, half=0.2):
    v = np.array([[-half, y, -half], [half, y, -half], [half, y, half], [-half, y, half]])
    return v, np.array([[0, 2, 1], [0, 3, 2]])  # normal +y


def test_rotation_matrix_is_rodrigues(rng):
    w = rng.normal(size=3)
    r = rotation_matrix(w)
    np.testing.assert_allclose(r @ r.T, np.eye(3), atol=1e-14)
    assert np.linalg.det(r) == pytest.approx(1.0)
    np.testing.assert_allclose(r @ w, w, atol=1e-14)  # the axis is fixed
    v = np.cross(w, rng.normal(size=3))
    cos = np.dot(r @ v, v) / np.dot(v, v)
    assert cos == pytest.approx(np.cos(np.linalg.norm(w)))


def test_prescribed_motion_steps_compose_to_the_exact_rigid_motion(rng):
    x0 = rng.normal(size=(5, 3))
    m = PrescribedMotion(np.arange(5), np.array([0.3, -0.1, 0.2]), np.array([0.0, 2.0, 1.0]),
                         np.array([0.1, 0.2, 0.3]), (0.05, 0.35))
    x = x0.copy()
    for k in range(50):
        x = m.advance(x, 0.01 * k, 0.01 * (k + 1))
    tau = 0.3  # active time within [0, 0.5]
    direct = m.center + m.linear_velocity * tau + (x0 - m.center) @ rotation_matrix(m.angular_velocity * tau).T
    np.testing.assert_allclose(x, direct, atol=1e-12)
    assert not m.is_active(0.0, 0.01) and m.is_active(0.1, 0.11)


def test_surface_selection_pulls_back_surface_derivatives(rng):
    index = np.array([4, 0, 2])
    dm = SurfaceMap.selection(index, 5)
    x = rng.normal(size=(5, 3))
    np.testing.assert_array_equal(dm.apply(x), x[index])
    g = rng.normal(size=9)
    full = dm.pull_gradient(g).reshape(5, 3)
    np.testing.assert_array_equal(full[index], g.reshape(3, 3))
    assert not full[[1, 3]].any()
    np.testing.assert_array_equal(free_coordinates(np.array([True, False])), [0, 0, 0, 1, 1, 1])


def test_builder_places_obstacles_after_bodies_massless_and_prescribed():
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (1, 1, 1))
    b = ModelBuilder()
    b.add_body(v, t)
    sv, sf = _square(-0.01)
    assert b.add_obstacle(sv, sf) == 0
    model, state = b.finalize()
    n = len(v)
    assert model.n_vertices == n + 4
    assert model.is_obstacle[n:].all() and not model.is_obstacle[:n].any()
    assert np.all(model.mass[n:] == 0) and np.all(model.mass[:n] > 0)
    assert model.fixed[n:].all()
    mesh = model.collision_mesh
    assert mesh.is_obstacle.sum() == 4 and np.all(mesh.body[mesh.is_obstacle] == 1)
    np.testing.assert_array_equal(mesh.select_positions(state.x)[mesh.is_obstacle], sv)
    with pytest.raises(ValueError, match="elements"):
        b.add_obstacle(sv, np.zeros((2, 5), int))


def test_cube_lands_on_static_triangle_obstacle():
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (2, 2, 2))
    b = ModelBuilder()
    b.add_body(v, t, translation=(-0.05, 0.003, -0.05), velocity=(0.0, -1.0, 0.0))
    b.add_obstacle(*_square(0.0))
    model, state = b.finalize()
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=1e-3, kappa=1e5))
    tk = _tk_mesh(model.collision_mesh)
    n = len(v)
    for _ in range(6):
        new = state.copy()
        stats = solver.step(state, new, None, 0.01)
        state = new
        assert stats.converged
        assert not ipctk.has_intersections(tk, model.collision_mesh.select_positions(state.x))
        np.testing.assert_array_equal(state.x[n:], model.rest_positions[n:])  # static obstacle did not move
    assert state.x[:n, 1].min() > 0.0
    assert stats.n_contacts > 0


@pytest.mark.parametrize("speed", [1.0, 4.0, 15.0])
def test_kinematic_plate_pushes_cube_without_intersection(speed):
    """A vertical plate sweeps +x at `speed` (1, 4 or 15 cm per step: more than the cube size) into a resting
    cube (no gravity)."""
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (2, 2, 2))
    pv, pt = box_tet_mesh((0.02, 0.2, 0.2), (1, 1, 1))
    b = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    b.add_body(v, t, youngs_modulus=1e5)
    b.add_obstacle(pv, pt, translation=(-0.025, -0.05, -0.05), velocity=(speed, 0.0, 0.0))
    model, state = b.finalize()
    n = len(v)
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=1e-3, kappa=1e5))
    tk = _tk_mesh(model.collision_mesh)
    h = 0.01
    plate0 = state.x[n:].copy()
    for k in range(1, 9):
        new = state.copy()
        stats = solver.step(state, new, None, h)
        state = new
        assert stats.converged
        np.testing.assert_allclose(state.x[n:], plate0 + [speed * k * h, 0, 0], atol=1e-12)
        xs = model.collision_mesh.select_positions(state.x)
        assert not ipctk.has_intersections(tk, xs)
        assert count_inverted_tets(state.x, model.tets) == 0
        assert state.x[:n, 0].min() > state.x[n:, 0].max()  # the cube stays in front of the plate
    assert stats.prescribed_iterations >= 1
    # the cube was pushed and has left the plate: a body struck by an infinitely heavy plate moving at V leaves it at
    # between V (no bounce) and 2 V (an elastic bounce); measured: 1.098, 1.099, 1.075 V (speeds 1, 4, 15 m/s:
    # implicit Euler damps the bounce)
    vx = np.mean(state.v[:n, 0])
    assert speed < vx < 2.0 * speed


def test_rotating_obstacle_paddle_stays_intersection_free():
    """A paddle spinning about the z axis (0.5 rad per step) sweeps through a falling cube's region."""
    v, t = box_tet_mesh((0.06, 0.06, 0.06), (1, 1, 1))
    pv, pt = box_tet_mesh((0.3, 0.02, 0.1), (3, 1, 1))
    b = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    b.add_body(v, t, translation=(0.05, 0.03, -0.03), youngs_modulus=1e5)
    b.add_obstacle(pv, pt, translation=(-0.15, -0.01, -0.05), angular_velocity=(0.0, 0.0, 50.0),
                   center=(0.0, 0.0, 0.0))
    model, state = b.finalize()
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=1e-3, kappa=1e5))
    tk = _tk_mesh(model.collision_mesh)
    for _ in range(3):
        new = state.copy()
        stats = solver.step(state, new, None, 0.01)
        state = new
        assert stats.converged
        assert not ipctk.has_intersections(tk, model.collision_mesh.select_positions(state.x))
        assert count_inverted_tets(state.x, model.tets) == 0
    assert np.linalg.norm(state.v[: len(v)].mean(0)) > 0.1  # the cube was hit


def test_bowl_obstacle_from_shared_data(shared_data):
    verts, cells = read_mesh(shared_data / "ipc/input/triMeshes/bowl.obj")
    faces = cells.get("triangle")
    assert faces is not None and len(faces)
    b = ModelBuilder()
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (1, 1, 1))
    size = float(np.ptp(verts, axis=0).max())
    b.add_body(v, t, translation=(0.0, 10.0, 0.0))
    b.add_obstacle(verts, faces, scale=1.0 / size)
    model, _ = b.finalize()
    assert model.collision_mesh.is_obstacle.sum() == len(verts)
    assert model.collision_mesh.n_faces == 12 + len(faces)


def test_cube_lands_on_static_tet_mesh_mat(shared_data):
    """mat20x20.msh (a 1 m x 13 mm x 1 m tet slab) as a static obstacle: only its boundary takes part."""
    from ipcsim.geometry.mesh_io import load_tet_mesh

    mv, mt = load_tet_mesh(shared_data / "ipc/input/tetMeshes/mat20x20.msh")
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (1, 1, 1))
    b = ModelBuilder()
    b.add_body(v, t, translation=(0.02, 0.0065 + 0.003, 0.03), velocity=(0.0, -1.0, 0.0))
    b.add_obstacle(mv, mt)
    model, state = b.finalize()
    n = len(v)
    assert model.n_vertices == n + len(mv) and len(model.tets) == len(t)
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=1e-3, kappa=1e5))
    tk = _tk_mesh(model.collision_mesh)
    for _ in range(5):
        new = state.copy()
        stats = solver.step(state, new, None, 0.01)
        state = new
        assert stats.converged
        assert not ipctk.has_intersections(tk, model.collision_mesh.select_positions(state.x))
    assert state.x[:n, 1].min() > 0.0065
    assert stats.n_contacts > 0
