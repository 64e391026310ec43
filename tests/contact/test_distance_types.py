"""Distance-type classification: every Voronoi region, parallel edges, degenerate input, ipctk parity
on constructed configurations, argument errors."""
import ipctk
import numpy as np
import pytest

import ipcsim.contact.distance as D
from _distance_configs import (EE_PARALLEL_EDGES, EE_REGION_EDGES, OFFSETS, PT_BOUNDARY_POINTS, PT_REGION_POINTS,
                               edge_edge_config, parallel_edge_config, point_triangle_config, random_rigid)


def test_type_codes_match_ipctk_enums():
    for name in ("P_T0", "P_T1", "P_T2", "P_E0", "P_E1", "P_E2", "P_T"):
        assert getattr(D, name) == int(getattr(ipctk.PointTriangleDistanceType, name))
    for name in ("EA0_EB0", "EA0_EB1", "EA1_EB0", "EA1_EB1", "EA_EB0", "EA_EB1", "EA0_EB", "EA1_EB", "EA_EB"):
        assert getattr(D, name) == int(getattr(ipctk.EdgeEdgeDistanceType, name))
    for mine, theirs in (("PE_P_E0", "P_E0"), ("PE_P_E1", "P_E1"), ("PE_P_E", "P_E")):
        assert getattr(D, mine) == int(getattr(ipctk.PointEdgeDistanceType, theirs))
    assert D.PT_AUTO == int(ipctk.PointTriangleDistanceType.AUTO)
    assert D.EE_AUTO == int(ipctk.EdgeEdgeDistanceType.AUTO)
    assert D.PE_AUTO == int(ipctk.PointEdgeDistanceType.AUTO)


@pytest.mark.parametrize("expected", sorted(PT_REGION_POINTS))
@pytest.mark.parametrize("offset", OFFSETS)
def test_point_triangle_every_region(expected, offset):
    cfg = point_triangle_config(PT_REGION_POINTS[expected], offset)
    assert D.point_triangle_distance_type(*cfg) == expected
    assert int(ipctk.point_triangle_distance_type(*cfg)) == expected
    # also in a random rigid frame (no axis alignment)
    rot, t = random_rigid(np.random.default_rng(expected * 7 + 3))
    moved = [rot @ v + t for v in cfg]
    assert D.point_triangle_distance_type(*moved) == expected


@pytest.mark.parametrize("xy", PT_BOUNDARY_POINTS)
@pytest.mark.parametrize("offset", OFFSETS)
def test_point_triangle_boundary_points_match_ipctk(xy, offset):
    """Points exactly on an edge or at a vertex (and above them): same tie-breaking as ipctk."""
    cfg = point_triangle_config(xy, offset)
    assert D.point_triangle_distance_type(*cfg) == int(ipctk.point_triangle_distance_type(*cfg))


@pytest.mark.parametrize("expected", sorted(EE_REGION_EDGES))
@pytest.mark.parametrize("offset", OFFSETS)
def test_edge_edge_every_region(expected, offset):
    cfg = edge_edge_config(*EE_REGION_EDGES[expected], offset)
    assert D.edge_edge_distance_type(*cfg) == expected
    assert int(ipctk.edge_edge_distance_type(*cfg)) == expected
    rot, t = random_rigid(np.random.default_rng(expected * 11 + 5))
    moved = [rot @ v + t for v in cfg]
    assert D.edge_edge_distance_type(*moved) == expected


@pytest.mark.parametrize("xs", sorted(EE_PARALLEL_EDGES))
@pytest.mark.parametrize("slope", [0.0, 1e-12, -1e-12])
@pytest.mark.parametrize("y", [0.0, 1e-12, 0.5, -2.0])
def test_edge_edge_parallel_types(xs, slope, y):
    cfg = parallel_edge_config(*xs, y, slope)
    expected = EE_PARALLEL_EDGES[xs]
    assert D.edge_edge_is_parallel(*cfg)
    assert D.edge_edge_distance_type(*cfg) == expected
    assert D.edge_edge_parallel_distance_type(*cfg) == expected
    assert int(ipctk.edge_edge_distance_type(*cfg)) == expected
    assert int(ipctk.edge_edge_parallel_distance_type(*cfg)) == expected


def test_edge_edge_parallel_threshold_is_relative():
    """sin^2 below 2.5e-16 counts as parallel at any edge length; above it does not."""
    for length in (1e-4, 1.0, 1e4):
        for sin, parallel in ((1e-9, True), (1e-7, False)):
            ea0, ea1 = np.zeros(3), np.array([length, 0.0, 0.0])
            eb0 = np.array([0.5 * length, 0.3 * length, 0.0])
            eb1 = eb0 + length * np.array([np.sqrt(1 - sin * sin), sin, 0.0])
            assert D.edge_edge_is_parallel(ea0, ea1, eb0, eb1) == parallel
            assert D.edge_edge_distance_type(ea0, ea1, eb0, eb1) == int(
                ipctk.edge_edge_distance_type(ea0, ea1, eb0, eb1))


def test_degenerate_edges():
    z = np.zeros(3)
    a = np.array([1.0, 0.0, 0.0])
    b = np.array([0.0, 1.0, 1.0])
    c = np.array([0.5, 2.0, 0.0])
    assert D.edge_edge_distance_type(z, z, b, b) == D.EA0_EB0
    assert D.edge_edge_distance_type(z, z, b, c) == D.EA0_EB
    assert D.edge_edge_distance_type(z, a, b, b) == D.EA_EB0
    assert D.point_edge_distance_type(b, a, a) == D.PE_P_E0
    for cfg in ((z, z, b, b), (z, z, b, c), (z, a, b, b)):
        assert D.edge_edge_distance_type(*cfg) == int(ipctk.edge_edge_distance_type(*cfg))


@pytest.mark.parametrize("ratio,expected", [(-0.5, 0), (0.0, 2), (0.3, 2), (1.0, 2), (1.5, 1)])
@pytest.mark.parametrize("offset", OFFSETS)
def test_point_edge_types(ratio, expected, offset):
    e0, e1 = np.array([0.0, 0.0, 0.0]), np.array([2.0, 0.0, 0.0])
    p = np.array([2.0 * ratio, offset, 0.3 * offset])
    assert D.point_edge_distance_type(p, e0, e1) == expected
    assert int(ipctk.point_edge_distance_type(p, e0, e1)) == expected


def test_random_types_match_ipctk():
    rng = np.random.default_rng(2024)
    for _ in range(1000):
        x = rng.normal(size=(4, 3))
        assert D.point_edge_distance_type(*x[:3]) == int(ipctk.point_edge_distance_type(*x[:3]))
        assert D.point_triangle_distance_type(*x) == int(ipctk.point_triangle_distance_type(*x))
        assert D.edge_edge_distance_type(*x) == int(ipctk.edge_edge_distance_type(*x))


def test_auto_type_equals_classified():
    rng = np.random.default_rng(7)
    for _ in range(50):
        x = rng.normal(size=(4, 3))
        t = D.point_triangle_distance_type(*x)
        assert D.point_triangle_distance_squared(*x, D.PT_AUTO) == D.point_triangle_distance_squared(*x, t)
        t = D.edge_edge_distance_type(*x)
        np.testing.assert_array_equal(D.edge_edge_distance_squared_gradient(*x, D.EE_AUTO),
                                      D.edge_edge_distance_squared_gradient(*x, t))
        t = D.point_edge_distance_type(*x[:3])
        np.testing.assert_array_equal(D.point_edge_distance_squared_hessian(*x[:3], D.PE_AUTO),
                                      D.point_edge_distance_squared_hessian(*x[:3], t))


# ------------------------------------------------------------------ argument errors
def test_bad_vertex_shape_raises():
    good = np.zeros(3)
    bad = np.zeros(4)
    with pytest.raises(ValueError, match="point_triangle"):
        D.point_triangle_distance_type(bad, good, good, good)
    with pytest.raises(ValueError, match="edge_edge"):
        D.edge_edge_distance_squared(good, good, good, bad, D.EA_EB)
    with pytest.raises(ValueError, match="point_line"):
        D.point_line_distance_squared_gradient(good, bad, good)
    with pytest.raises(ValueError, match="point_plane"):
        D.point_plane_distance_squared_hessian(good, good, good, np.zeros(2))
    with pytest.raises(ValueError, match="edge_edge_cross_squarednorm"):
        D.edge_edge_cross_squarednorm(good, good, bad, good)


def test_bad_dtype_raises():
    x = np.random.default_rng(0).normal(size=(4, 3))
    with pytest.raises(ValueError, match="point-triangle distance type"):
        D.point_triangle_distance_squared(*x, 8)
    with pytest.raises(ValueError, match="edge-edge distance type"):
        D.edge_edge_distance_squared_gradient(*x, -1)
    with pytest.raises(ValueError, match="point-edge distance type"):
        D.point_edge_distance_squared_hessian(*x[:3], 4)


def test_bad_out_shape_raises():
    x = np.random.default_rng(0).normal(size=(4, 3))
    with pytest.raises(ValueError, match="out must have shape \\(12,\\)"):
        D.point_triangle_distance_squared_gradient_into(*x, D.P_T, np.zeros(9))
    with pytest.raises(ValueError, match="out must have shape \\(12, 12\\)"):
        D.edge_edge_distance_squared_hessian_into(*x, D.EA_EB, np.zeros((12, 9)))
    with pytest.raises(ValueError, match="out must have shape \\(6, 6\\)"):
        D.point_point_distance_squared_hessian_into(x[0], x[1], np.zeros((9, 9)))


# ---------------------------------------------------------------- ties on exactly aligned geometry
def test_fused_multiply_add_rounds_once():
    from numba import njit

    from ipcsim.contact.distance._fused import fma as fma_intrinsic

    fma = njit(lambda a, b, c: fma_intrinsic(a, b, c))
    a, b = 1.0 + 2.0**-30, 1.0 - 2.0**-30  # a b = 1 - 2^-60 exactly
    assert a * b - 1.0 == 0.0
    assert fma(a, b, -1.0) == -(2.0**-60)


def test_edge_frame_coordinates_solve_the_least_squares_problem():
    from ipcsim.contact.distance._fused import edge_frame_coordinates

    rng = np.random.default_rng(42)
    for _ in range(50):
        e, r, w = rng.normal(size=(3, 3))
        r -= r @ e / (e @ e) * e  # the classifier's frames are orthogonal, but the solve must not rely on it
        r += 0.3 * rng.normal() * e
        s, h = edge_frame_coordinates(e, r, w)
        ref = np.linalg.lstsq(np.stack([e, r], 1), w, rcond=None)[0]
        np.testing.assert_allclose([s, h], ref, rtol=1e-10, atol=1e-12)
    z = np.zeros(3)
    assert edge_frame_coordinates(z, z, np.ones(3)) == (0.0, 0.0)


def _sheet_candidates(n, shift):
    from _sheets import sheets_mesh

    from ipcsim.contact.broad_phase import build_candidates

    mesh, x = sheets_mesh(n, 0.5e-3, shift)
    return mesh, x, build_candidates(mesh, x, inflation_radius=0.5e-3)


@pytest.mark.parametrize("shift", [(0.0, 0.0), (0.5 / 19, 0.0), (0.5 / 19, 0.5 / 19)])
def test_sheet_edge_edge_types_match_ipctk(shift):
    """Every edge-edge candidate of two parallel 20x20 sheets (vertices right above vertices or
    edge midpoints: crossings at end points, collinear edges), both pair orientations."""
    mesh, x, cand = _sheet_candidates(20, shift)
    E = mesh.edges
    assert len(cand.ee) > 5000
    bad = []
    for ea, eb in cand.ee:
        for args in ((x[E[ea, 0]], x[E[ea, 1]], x[E[eb, 0]], x[E[eb, 1]]),
                     (x[E[eb, 0]], x[E[eb, 1]], x[E[ea, 0]], x[E[ea, 1]])):
            ours, theirs = D.edge_edge_distance_type(*args), int(ipctk.edge_edge_distance_type(*args))
            if ours != theirs:
                bad.append((ea, eb, ours, theirs))
    assert not bad, f"{len(bad)} of {2 * len(cand.ee)} differ, e.g. {bad[:3]}"


@pytest.mark.parametrize("shift", [(0.0, 0.0), (0.5 / 19, 0.0), (0.5 / 19, 0.5 / 19)])
def test_sheet_point_triangle_and_point_edge_types_match_ipctk(shift):
    """Every vertex-face candidate of the two sheets (points above vertices, on edges, at edge
    midpoints), and the point against each edge of the candidate face."""
    mesh, x, cand = _sheet_candidates(20, shift)
    F = mesh.faces
    assert len(cand.vf) > 2000
    bad = []
    for v, f in cand.vf:
        p, t = x[v], x[F[f]]
        ours, theirs = D.point_triangle_distance_type(p, *t), int(ipctk.point_triangle_distance_type(p, *t))
        if ours != theirs:
            bad.append(("pt", v, f, ours, theirs))
        for i in range(3):
            e0, e1 = t[i], t[(i + 1) % 3]
            ours, theirs = D.point_edge_distance_type(p, e0, e1), int(ipctk.point_edge_distance_type(p, e0, e1))
            if ours != theirs:
                bad.append(("pe", v, f, i, ours, theirs))
    assert not bad, f"{len(bad)} differ, e.g. {bad[:3]}"
