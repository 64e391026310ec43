"""Closest points, tangent bases and relative-displacement maps per contact kind."""
import ipctk
import numpy as np
import pytest

from ipcsim.contact.collisions_data import EE, EV, FV, PV, VV
from ipcsim.contact.friction import tangent as tg


def _random_stencils(seed, n=25):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(4, 3)) * rng.uniform(0.01, 10) for _ in range(n)]


def _degenerate_stencils():
    """Stencils whose closest points sit on primitive boundaries or are axis-aligned."""
    t0, t1, t2 = np.array([0.0, 0, 0]), np.array([1.0, 0, 0]), np.array([0.0, 1, 0])
    up = np.array([0.0, 0, 0.1])
    return [
        np.array([t0 + up, t0, t1, t2]),                       # point above a triangle vertex
        np.array([0.5 * (t1 + t2) + up, t0, t1, t2]),          # point above a triangle edge
        np.array([t1 + up, t1, t0, t2]),                        # point above e0 / first vertex
        np.array([[0.0, 0, 0.1], [0.0, 0, 0], [1, 0, 0], [0, 0, 5]]),  # EV: closest at e0 (alpha = 0)
        np.array([[0.0, 0, 0], [1.0, 0, 0], [1.0, -1, 0.1], [1.0, 1, 0.1]]),  # EE: endpoint on a line
        np.array([[0.0, 0, 0], [0.0, 0, 1], [1e-3, 0, 0], [1e-3, 0, 2]]),  # VV along z
    ]


# vertex-vertex directions on the axes and on the e_x / e_y switch of the basis
VV_DIRECTIONS = [[1.0, 0, 0], [0, 1.0, 0], [0, 0, -1.0], [1.0, 1.0, 0], [1.0, -1.0, 0.5], [-2.0, 2.0, 3.0]]


@pytest.mark.parametrize("d", VV_DIRECTIONS)
def test_point_point_basis_axis_aligned(d):
    p0 = np.array([0.1, 0.2, 0.3])
    p1 = p0 + np.array(d)
    T = tg.point_point_tangent_basis(p0, p1)
    np.testing.assert_allclose(T, ipctk.point_point_tangent_basis(p0, p1), atol=1e-15)
    np.testing.assert_allclose(T.T @ T, np.eye(2), atol=1e-15)
    np.testing.assert_allclose(T.T @ np.array(d), 0.0, atol=1e-15)


STENCILS = _random_stencils(3) + _degenerate_stencils()


@pytest.mark.parametrize("xs", STENCILS)
def test_bases_match_ipctk(xs):
    p0, p1, p2, p3 = xs
    np.testing.assert_allclose(tg.point_point_tangent_basis(p0, p1), ipctk.point_point_tangent_basis(p0, p1),
                               atol=1e-13)
    np.testing.assert_allclose(tg.point_edge_tangent_basis(p0, p1, p2),
                               ipctk.point_edge_tangent_basis(p0, p1, p2), atol=1e-13)
    if np.linalg.norm(np.cross(p1 - p0, p3 - p2)) > 1e-9:
        np.testing.assert_allclose(tg.edge_edge_tangent_basis(*xs), ipctk.edge_edge_tangent_basis(*xs), atol=1e-13)
    np.testing.assert_allclose(tg.point_triangle_tangent_basis(*xs), ipctk.point_triangle_tangent_basis(*xs),
                               atol=1e-13)


@pytest.mark.parametrize("xs", STENCILS)
def test_closest_points_match_ipctk(xs):
    p0, p1, p2, p3 = xs
    assert tg.point_edge_closest_point(p0, p1, p2) == pytest.approx(
        ipctk.point_edge_closest_point(p0, p1, p2), rel=1e-11, abs=1e-13)
    np.testing.assert_allclose(tg.point_triangle_closest_point(*xs), ipctk.point_triangle_closest_point(*xs),
                               rtol=1e-10, atol=1e-12)
    if np.linalg.norm(np.cross(p1 - p0, p3 - p2)) > 1e-3 * np.linalg.norm(p1 - p0) * np.linalg.norm(p3 - p2):
        np.testing.assert_allclose(tg.edge_edge_closest_point(*xs), ipctk.edge_edge_closest_point(*xs),
                                   rtol=1e-9, atol=1e-11)


def test_degenerate_closest_points_exact():
    t0, t1, t2 = np.array([0.0, 0, 0]), np.array([1.0, 0, 0]), np.array([0.0, 1, 0])
    up = np.array([0.0, 0, 0.1])
    np.testing.assert_allclose(tg.point_triangle_closest_point(t0 + up, t0, t1, t2), [0, 0], atol=1e-15)
    np.testing.assert_allclose(tg.point_triangle_closest_point(t2 + up, t0, t1, t2), [0, 1], atol=1e-15)
    np.testing.assert_allclose(tg.point_triangle_closest_point(0.5 * (t1 + t2) + up, t0, t1, t2), [0.5, 0.5],
                               atol=1e-15)
    assert tg.point_edge_closest_point(t1 + up, t0, t1) == pytest.approx(1.0, abs=1e-15)
    ee = tg.edge_edge_closest_point(np.array([0.0, 0, 0]), np.array([2.0, 0, 0]),
                                    np.array([2.0, -1, 0.1]), np.array([2.0, 1, 0.1]))
    np.testing.assert_allclose(ee, [1.0, 0.5], atol=1e-15)


def _contact_normal(kind, xs, beta):
    """Direction between the two closest points (the contact normal)."""
    if kind == VV:
        return xs[1] - xs[0]
    if kind == EV:
        return xs[0] - (xs[1] + beta[0] * (xs[2] - xs[1]))
    if kind == EE:
        return np.cross(xs[1] - xs[0], xs[3] - xs[2])
    return np.cross(xs[2] - xs[1], xs[3] - xs[1])


@pytest.mark.parametrize("kind", [VV, EV, EE, FV])
@pytest.mark.parametrize("seed", [0, 1])
def test_frames_are_orthonormal_tangent_and_annihilate_the_distance_vector(kind, seed):
    for xs in _random_stencils(seed, 10):
        beta, T, gamma = tg.stencil_tangent_frame(kind, xs, np.array([0.0, 0, 1]))
        np.testing.assert_allclose(T.T @ T, np.eye(2), atol=1e-12)
        n = _contact_normal(kind, xs, beta)
        np.testing.assert_allclose(T.T @ n / np.linalg.norm(n), 0.0, atol=1e-11)
        # the closest points differ only along the normal: T^T Gamma x = 0
        r = gamma @ xs
        assert np.linalg.norm(T.T @ r) <= 1e-11 * np.abs(xs).max()
        # a rigid translation causes no relative displacement
        assert abs(gamma.sum()) < 1e-12


def test_plane_vertex_frame():
    normal = np.array([0.3, -0.2, 0.9])
    normal /= np.linalg.norm(normal)
    xs = np.zeros((4, 3))
    xs[0] = [0.4, 1.0, -2.0]
    beta, T, gamma = tg.stencil_tangent_frame(PV, xs, normal)
    np.testing.assert_allclose(T, ipctk.point_point_tangent_basis(np.zeros(3), normal), atol=1e-15)
    np.testing.assert_allclose(T.T @ T, np.eye(2), atol=1e-14)
    np.testing.assert_allclose(T.T @ normal, 0.0, atol=1e-15)
    np.testing.assert_array_equal(gamma, [1, 0, 0, 0])
    np.testing.assert_array_equal(beta, [0, 0])


def test_relative_displacement_jacobian_matches_ipctk():
    rng = np.random.default_rng(11)
    for _ in range(5):
        b = rng.uniform(-0.5, 1.5, 2)
        np.testing.assert_allclose(tg.relative_displacement_jacobian(VV), ipctk.point_point_relative_velocity_jacobian(3))
        np.testing.assert_allclose(tg.relative_displacement_jacobian(EV, b[:1]),
                                   ipctk.point_edge_relative_velocity_jacobian(3, b[0]), atol=1e-15)
        np.testing.assert_allclose(tg.relative_displacement_jacobian(EE, b),
                                   ipctk.edge_edge_relative_velocity_jacobian(b), atol=1e-15)
        np.testing.assert_allclose(tg.relative_displacement_jacobian(FV, b),
                                   ipctk.point_triangle_relative_velocity_jacobian(b), atol=1e-15)
    np.testing.assert_array_equal(tg.relative_displacement_jacobian(PV), np.eye(3))


def test_relative_displacement_jacobian_bad_input():
    with pytest.raises(ValueError, match="kind"):
        tg.relative_displacement_jacobian(7)
    with pytest.raises(ValueError, match="closest-point"):
        tg.relative_displacement_jacobian(FV, [0.2])
