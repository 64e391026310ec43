"""The scene driver's per-step checks can fail: each one is shown a configuration it must reject."""
import numpy as np
import pytest

from _scene_harness import check_state, ipctk_mesh, placed_at, points_below_surface, rotation_y, surface_heights
from ipcsim.model import ModelBuilder, box_tet_mesh


def _two_boxes():
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (1, 1, 1))
    b = ModelBuilder()
    b.add_ground(0.0)
    b.add_body(v, t, translation=(0.0, 0.01, 0.0))
    b.add_body(v, t, translation=(0.0, 0.2, 0.0))
    model, state = b.finalize()
    return model, state, len(v)


def test_check_state_accepts_separated_boxes():
    model, state, _ = _two_boxes()
    check_state(model, state.x, ipctk_mesh(model), "separated")


def test_check_state_rejects_interpenetration():
    model, state, n = _two_boxes()
    x = state.x.copy()
    x[n:] += [0.03, -0.15, 0.02]  # the upper box sinks 5 cm into the lower one
    with pytest.raises(AssertionError, match="intersection"):
        check_state(model, x, ipctk_mesh(model), "overlap")


def test_check_state_rejects_inverted_tets():
    model, state, n = _two_boxes()
    x = state.x.copy()
    x[:n, 1] = 0.11 - (x[:n, 1] - 0.01)  # mirror the lower box in y: every tet inverted, surface unchanged
    with pytest.raises(AssertionError, match="inverted"):
        check_state(model, x, ipctk_mesh(model), "mirrored")


def test_check_state_rejects_a_vertex_behind_the_ground():
    model, state, n = _two_boxes()
    x = state.x.copy()
    x[:n, 1] -= 0.02  # the lower box pokes 1 cm into the half-space y < 0
    with pytest.raises(AssertionError, match="behind the plane"):
        check_state(model, x, ipctk_mesh(model), "sunk")


def test_surface_heights_and_points_below():
    x = np.array([[0.0, 0.0, 0.0], [1.0, 0.1, 0.0], [0.0, 0.2, 1.0]])
    faces = np.array([[0, 1, 2]])
    pts = np.array([[0.2, 0.5, 0.2], [0.2, -0.5, 0.2], [0.2, 0.07, 0.2], [0.2, 0.05, 0.2], [2.0, -9.0, 2.0]])
    h = surface_heights(pts, x, faces)  # the plane y = 0.1 x + 0.2 z: 0.06 at (0.2, 0.2); the last point is outside
    np.testing.assert_allclose(h[:4], 0.06)
    assert np.isnan(h[4])
    np.testing.assert_array_equal(points_below_surface(pts, x, faces), [False, True, False, True, False])


def test_placed_at_puts_the_lowest_point_at_the_target():
    v, _ = box_tet_mesh((1.0, 1.0, 1.0), (1, 1, 1))
    rot = rotation_y(30.0)
    placed = v @ rot.T + placed_at(v, rot, (0.4, 2.0, -0.3))
    assert placed[:, 1].min() == pytest.approx(2.0)
    np.testing.assert_allclose((placed.min(0) + placed.max(0))[[0, 2]] / 2, (0.4, -0.3))
    np.testing.assert_allclose(rot @ rot.T, np.eye(3), atol=1e-15)
