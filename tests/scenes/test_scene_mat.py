"""Scenes 2 and 4: a cube on IPC's mat20x20.msh (a 1 m x 13 mm x 1 m tet slab, 800 vertices, 2166 tets).

2. A 0.5 m cube (cube.msh scaled) is dropped on the mat lying on the ground: it comes to rest on the mat, the mat
   on the ground, each within dhat, every step intersection-free and uninverted.
4. The same cube shot at the mat at 50 m/s with h = 0.04 s (2 m per step, 150 times the mat's thickness); the
   mat hangs from its four pinned corners, so nothing but the mat can stop the cube: the cube never gets to the
   mat's far side, the mat catches it and throws it back up.
"""
import numpy as np

from _scene_harness import placed_at, points_below_surface, rotation_y, run_scene, velocity_resolution
from ipcsim.geometry.mesh_io import load_tet_mesh
from ipcsim.model import ModelBuilder
from ipcsim.solvers.integrator_solvers import ContactParameters, ImplicitEulerSolver

DHAT = 1e-3  # [m]
HALF_THICKNESS = 0.0065  # [m], mat20x20.msh spans y in [-0.0065, 0.0065]
CUBE_SIZE = 0.5  # [m]


def _meshes(shared_data):
    cv, ct = load_tet_mesh(shared_data / "ipc/input/tetMeshes/cube.msh")
    mv, mt = load_tet_mesh(shared_data / "ipc/input/tetMeshes/mat20x20.msh")
    return cv * CUBE_SIZE, ct, mv, mt


def _top_faces(model, mat_vertices: int) -> np.ndarray:
    """(f, 3) full-vertex ids of the mat's upper boundary faces (all three vertices on the top layer at rest)."""
    mesh = model.collision_mesh
    full = mesh.full_vertex_index[mesh.faces]
    full = full[np.all(full < mat_vertices, axis=1)]
    rest_y = model.rest_positions[full, 1]
    return full[np.all(rest_y > rest_y.max() - 1e-9, axis=1)]


def test_cube_dropped_on_mat_rests_on_it(shared_data):
    cv, ct, mv, mt = _meshes(shared_data)
    young_mat = 1e6  # [Pa]; the cube's weight (4.9 kPa over its face) squeezes the mat by 13 mm * 4.9e-3 = 0.06 mm
    b = ModelBuilder()
    b.add_ground(0.0)
    b.add_body(mv, mt, translation=(0.0, HALF_THICKNESS + 0.002, 0.0), youngs_modulus=young_mat)
    rot = rotation_y(30.0)
    top = 2 * HALF_THICKNESS + 0.002
    b.add_body(cv, ct, rotation=rot, translation=placed_at(cv, rot, (0.05, top + 0.02, -0.1)), youngs_modulus=1e7)
    model, state = b.finalize()
    n = len(mv)
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=DHAT))
    state, rec = run_scene(model, state, solver, 0.02, 12, "cube on mat")  # at rest from step 6
    mat, cube = state.x[:n], state.x[n:]
    ground_gap = mat[:, 1].min()
    assert 0.0 < ground_gap <= DHAT
    # resting on the mat: ground gap + mat thickness (less its squeeze, < DHAT / 10) + a gap within DHAT
    rest = cube[:, 1].min() - ground_gap - 2 * HALF_THICKNESS
    assert -0.1 * DHAT < rest <= DHAT
    assert rec.n_contacts[-1] > len(mv) // 2  # the mat's bottom layer on the ground and the cube on the mat
    np.testing.assert_allclose(state.v, 0.0, atol=velocity_resolution(solver))
    # the cube stayed where it was dropped (frictionless, flat contact: no sideways push)
    np.testing.assert_allclose(cube.mean(0)[[0, 2]], (0.05, -0.1), atol=DHAT)


def test_fast_cube_does_not_tunnel_through_pinned_mat(shared_data):
    cv, ct, mv, mt = _meshes(shared_data)
    corners = (np.abs(mv[:, 0]) > 0.49) & (np.abs(mv[:, 2]) > 0.49)
    assert corners.sum() == 8  # 4 corners x 2 layers
    b = ModelBuilder()
    b.add_body(mv, mt, youngs_modulus=1e7, fixed=corners)
    rot = rotation_y(30.0)
    b.add_body(cv, ct, rotation=rot, translation=placed_at(cv, rot, (0.0, HALF_THICKNESS + 0.5, 0.0)),
               velocity=(0.0, -50.0, 0.0), youngs_modulus=1e7, density=100.0)
    model, state = b.finalize()
    n = len(mv)
    top_faces = _top_faces(model, n)
    assert len(top_faces) == 2 * 19 * 19
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=DHAT))
    h = 0.04  # the cube would travel 2 m in the first step, 0.5 m of it free: contact within step 1
    cube_vy = []

    def on_step(k, s, stats):
        below = points_below_surface(s.x[n:], s.x, top_faces)
        assert not below.any(), f"step {k}: cube vertices {np.flatnonzero(below)} below the mat"
        assert s.x[n:, 1].mean() > s.x[:n, 1].mean(), f"step {k}: cube centre below the mat's"
        if k == 1:
            assert stats.n_contacts > 0  # the mat was reached within the first step, and held
        cube_vy.append(float(s.v[n:, 1].mean()))

    state, rec = run_scene(model, state, solver, h, 8, "fast cube on pinned mat", on_step)
    assert cube_vy[0] > -25.0  # the mat took at least half of the cube's 50 m/s in the impact step
    assert max(cube_vy) > 1.0  # ... and threw it back up (the pinned mat is a trampoline)
    assert state.x[n:, 1].min() > state.x[:n, 1].max()  # the cube ends above the whole mat
