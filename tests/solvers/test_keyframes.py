"""Keyframed (per-frame positions) kinematic obstacles: interpolation, the builder, and a contact scene."""
import numpy as np
import pytest

from ipcsim.contact.intersection import has_intersections
from ipcsim.model import ModelBuilder, box_tet_mesh
from ipcsim.model.control import KeyframedMotion
from ipcsim.solvers.integrator_solvers import ContactParameters, ImplicitEulerSolver


def test_positions_are_linear_between_frames_and_held_outside(rng):
    frames = rng.normal(size=(3, 4, 3))
    m = KeyframedMotion(np.arange(4) + 7, [0.5, 1.0, 2.0], frames)
    np.testing.assert_array_equal(m.positions_at(0.0), frames[0])
    np.testing.assert_array_equal(m.positions_at(0.5), frames[0])
    np.testing.assert_allclose(m.positions_at(0.75), 0.5 * (frames[0] + frames[1]), rtol=1e-15)
    np.testing.assert_allclose(m.positions_at(1.5), 0.5 * (frames[1] + frames[2]), rtol=1e-15)
    np.testing.assert_allclose(m.positions_at(1.25), 0.75 * frames[1] + 0.25 * frames[2], rtol=1e-15)
    np.testing.assert_array_equal(m.positions_at(2.0), frames[2])
    np.testing.assert_array_equal(m.positions_at(9.0), frames[2])
    np.testing.assert_array_equal(m.advance(np.zeros((4, 3)), 1.0, 1.5), m.positions_at(1.5))
    assert m.obstacle and m.is_active(3.0, 3.1) and m.time_range == (0.5, 2.0)


@pytest.mark.parametrize("times, positions, message", [
    ([], np.zeros((0, 2, 3)), "non-empty"),
    ([0.0, 0.0], np.zeros((2, 2, 3)), "strictly increasing"),
    ([0.0, np.nan], np.zeros((2, 2, 3)), "finite"),
    ([0.0, 1.0], np.zeros((2, 3, 3)), r"\(2, 2, 3\)"),
    ([0.0], np.full((1, 2, 3), np.inf), "finite"),
])
def test_bad_keyframes_are_rejected(times, positions, message):
    with pytest.raises(ValueError, match=message):
        KeyframedMotion([0, 1], times, positions)


def _segment_frames(n_frames, dt):
    """A horizontal 2-segment obstacle rising 1 cm per frame."""
    v = np.array([[-1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    times = dt * np.arange(n_frames)
    return v, times, np.stack([v + [0.0, 0.01 * k, 0.0] for k in range(n_frames)])


def test_builder_keyframes_drive_the_obstacle_vertices():
    body_v, body_t = box_tet_mesh((0.2, 0.2, 0.2), (1, 1, 1))
    v, times, frames = _segment_frames(4, 0.1)
    b = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    b.add_body(body_v, body_t, translation=(5.0, 0.0, 0.0))
    b.add_obstacle(v + [0.0, 0.5, 0.0], [[0, 1], [1, 2]], keyframes=(times, frames))
    model, state = b.finalize()
    obs = np.flatnonzero(model.is_obstacle)
    np.testing.assert_array_equal(state.x[obs], v + [0.0, 0.5, 0.0])  # initial: the placed vertices
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=1e-3))
    dt = 0.05  # half a frame: the targets interpolate
    for k in range(1, 9):
        new = state.copy()
        solver.step(state, new, None, dt)
        state = new
        expected = frames[0] + [0.0, 0.01 * min(k * dt / 0.1, 3.0), 0.0]
        np.testing.assert_allclose(state.x[obs], expected, atol=1e-12)
    np.testing.assert_allclose(state.x[:8], model.rest_positions[:8], atol=1e-12)  # the far body stays


def test_keyframes_exclude_velocities_and_need_matching_shapes():
    v, times, frames = _segment_frames(2, 0.1)
    b = ModelBuilder()
    with pytest.raises(ValueError, match="keyframes or velocity"):
        b.add_obstacle(v, [[0, 1]], velocity=(1.0, 0.0, 0.0), keyframes=(times, frames))
    with pytest.raises(ValueError, match=r"obstacle 0: keyframe positions must be a finite \(2, 3, 3\)"):
        b.add_obstacle(v, [[0, 1]], keyframes=(times, frames[:, :2]))


def test_rising_keyframed_sheet_lifts_a_cube_without_intersection():
    cube_v, cube_t = box_tet_mesh((0.2, 0.2, 0.2), (1, 1, 1))
    sheet = np.array([[-0.5, 0.0, -0.5], [0.5, 0.0, -0.5], [0.5, 0.0, 0.5], [-0.5, 0.0, 0.5]])
    faces = np.array([[0, 2, 1], [0, 3, 2]])
    times = np.array([0.0, 0.2])
    frames = np.stack([sheet, sheet + [0.0, 0.1, 0.0]])  # rises 10 cm in 0.2 s, then stays
    b = ModelBuilder(gravity=(0.0, -9.81, 0.0))
    b.add_body(cube_v, cube_t, translation=(-0.1, 0.002, -0.1), youngs_modulus=1e6)
    b.add_obstacle(sheet, faces, keyframes=(times, frames))
    model, state = b.finalize()
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=1e-3))
    mesh = model.collision_mesh
    for _ in range(6):
        new = state.copy()
        stats = solver.step(state, new, None, 0.04)
        state = new
        assert not has_intersections(mesh, mesh.select_positions(state.x))
    body_bottom = state.x[~model.is_obstacle, 1].min()
    sheet_y = state.x[model.is_obstacle, 1]
    np.testing.assert_allclose(sheet_y, 0.1, atol=1e-12)
    assert 0.1 < body_bottom < 0.1 + 2e-3  # carried up, resting within ~dhat above the sheet
    assert stats.n_contacts > 0


def test_bounding_box_step_motion_reproduces_ipcs_recorded_rotation(shared_data):
    """IPC rotated triangle.seg (scale 2, at y = 1) with angularVelocity 10 90 0 [deg/s], h = 0.025 s, and
    recorded every step in segMeshes/sequence/<n>.seg (n = steps done): replay it with the builder's "bbox"
    center (Rx Ry Rz (w h) about the bounding-box center at each step start)."""
    from ipcsim.scene.mesh_files import read_seg

    seq = shared_data / "ipc" / "input" / "segMeshes" / "sequence"
    x0 = read_seg(seq / "0.seg")[0]
    body_v, body_t = box_tet_mesh((0.1, 0.1, 0.1), (1, 1, 1))
    b = ModelBuilder()
    b.add_body(body_v, body_t, translation=(9.0, 0.0, 0.0))
    b.add_obstacle(x0, [[0, 2], [1, 0], [2, 1]], angular_velocity=np.radians([10.0, 90.0, 0.0]), center="bbox")
    model, state = b.finalize()
    (motion,) = model.control.motions
    obs = np.flatnonzero(model.is_obstacle)
    x, h = state.x, 0.025
    worst = 0.0
    for n in range(1, 201):
        x = model.control.targets(x, (n - 1) * h, n * h)
        worst = max(worst, np.abs(x[obs] - read_seg(seq / f"{n}.seg")[0]).max())
        if n <= 5:
            assert worst < 1e-9
    assert worst < 1e-5  # the files keep 11 significant digits; the replay drifts by round-off only
    # the fixed-center exact rotation (center [x, y, z] or null) is a different, step-independent motion
    b2 = ModelBuilder()
    b2.add_body(body_v, body_t, translation=(9.0, 0.0, 0.0))
    b2.add_obstacle(x0, [[0, 2]], angular_velocity=np.radians([10.0, 90.0, 0.0]),
                    center=0.5 * (x0.min(axis=0) + x0.max(axis=0)))
    model2, state2 = b2.finalize()
    y = model2.control.targets(state2.x, 0.0, 40 * h)
    assert np.abs(y[obs] - read_seg(seq / "40.seg")[0]).max() > 0.1


def test_bbox_center_for_dirichlet_sets_and_bad_center_strings():
    v, t = box_tet_mesh((1.0, 1.0, 1.0), (1, 1, 1))
    b = ModelBuilder()
    body = b.add_body(v, t)
    b.add_dirichlet(body, indices=[0, 1, 2, 3], angular_velocity=(0.0, 0.0, 1.0), center="bbox")
    model, state = b.finalize()
    (m,) = model.control.motions
    sel = state.x[m.vertices]
    np.testing.assert_allclose(m.center, 0.5 * (sel.min(axis=0) + sel.max(axis=0)))
    moved = model.control.targets(state.x, 0.0, 0.5)[m.vertices]
    c = 0.5 * (sel.min(axis=0) + sel.max(axis=0))
    rz = np.array([[np.cos(0.5), -np.sin(0.5), 0.0], [np.sin(0.5), np.cos(0.5), 0.0], [0.0, 0.0, 1.0]])
    np.testing.assert_allclose(moved, c + (sel - c) @ rz.T, atol=1e-15)
    with pytest.raises(ValueError, match="center must be a 3-vector"):
        ModelBuilder().add_obstacle(v, t, angular_velocity=(0.0, 1.0, 0.0), center="middle")
