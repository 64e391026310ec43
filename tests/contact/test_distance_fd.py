"""Finite-difference checks of every distance gradient and Hessian, on random configurations and on
degenerate ones (point on the line/plane/edge, at a vertex, intersecting and (nearly) parallel edges,
ipc-toolkit's offsets -10 .. 10)."""
import numpy as np
import pytest

import ipcsim.contact.distance as D
from _distance_configs import (EE_PARALLEL_EDGES, EE_REGION_EDGES, OFFSETS, PT_BOUNDARY_POINTS, PT_REGION_POINTS,
                               assert_fd_close, edge_edge_config, fd_gradient, fd_jacobian, parallel_edge_config,
                               point_triangle_config)

RTOL = 1e-6
REL_STEP = 1e-6


def check_fd(value, gradient, hessian, x, what, length_scale=1.0):
    """Central differences of value -> gradient and of gradient -> Hessian at x (k, 3).

    The step is REL_STEP times the coordinate magnitude, times ``length_scale`` (< 1 where the
    function varies on a shorter scale, e.g. sin(angle) for nearly parallel lines)."""
    x = np.asarray(x, dtype=float)
    h = REL_STEP * max(1.0, np.abs(x).max()) * length_scale
    g = gradient(x)
    H = hessian(x)
    assert g.shape == (x.size,) and H.shape == (x.size, x.size)
    assert_fd_close(g, fd_gradient(value, x, h), RTOL, what=what + " gradient")
    assert_fd_close(H, fd_jacobian(gradient, x, h), RTOL, what=what + " hessian")
    np.testing.assert_allclose(H, H.T, rtol=0, atol=1e-12 * max(1.0, np.abs(H).max()))


def raw(name):
    f = getattr(D, name + "_distance_squared")
    g = getattr(D, name + "_distance_squared_gradient")
    h = getattr(D, name + "_distance_squared_hessian")
    return (lambda x: f(*x)), (lambda x: g(*x)), (lambda x: h(*x))


def typed(name, dtype):
    f = getattr(D, name + "_distance_squared")
    g = getattr(D, name + "_distance_squared_gradient")
    h = getattr(D, name + "_distance_squared_hessian")
    return (lambda x: f(*x, dtype)), (lambda x: g(*x, dtype)), (lambda x: h(*x, dtype))


def random_configs(k, n, seed):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(k, 3)) for _ in range(n)]


# ------------------------------------------------------------------ raw distances, random
@pytest.mark.parametrize("name,k", [("point_point", 2), ("point_line", 3), ("point_plane", 4), ("line_line", 4)])
def test_raw_random(name, k):
    for i, x in enumerate(random_configs(k, 20, seed=k)):
        check_fd(*raw(name), x, f"{name} random #{i}")


# ------------------------------------------------------------------ raw distances, degenerate
@pytest.mark.parametrize("offset", OFFSETS)
def test_point_point_degenerate(offset):
    p0 = np.array([0.3, -0.2, 0.1])
    x = np.stack([p0, p0 + offset * np.array([1.0, 2.0, -1.0]) / np.sqrt(6.0)])  # offset 0: coincident
    check_fd(*raw("point_point"), x, f"point_point offset {offset}")


@pytest.mark.parametrize("along", [-0.5, 0.0, 0.4, 1.0, 2.0])  # 0 and 1: projection at a vertex
@pytest.mark.parametrize("offset", OFFSETS)
def test_point_line_degenerate(along, offset):
    e0, e1 = np.array([0.1, 0.2, -0.3]), np.array([1.3, -0.4, 0.5])
    e = e1 - e0
    normal = np.cross(e, [0.0, 0.0, 1.0])
    normal /= np.linalg.norm(normal)
    p = e0 + along * e + offset * normal  # offset 0: p on the line
    check_fd(*raw("point_line"), np.stack([p, e0, e1]), f"point_line along {along} offset {offset}")


@pytest.mark.parametrize("xy", list(PT_REGION_POINTS.values()) + PT_BOUNDARY_POINTS)
@pytest.mark.parametrize("offset", OFFSETS)
def test_point_plane_degenerate(xy, offset):
    """Offset 0: p on the plane (d2 = 0, gradient 0); boundary points: on an edge or a vertex."""
    x = np.stack(point_triangle_config(xy, offset))
    check_fd(*raw("point_plane"), x, f"point_plane {xy} offset {offset}")


@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("angle", [np.pi / 2, 0.3, 1e-2])
def test_line_line_degenerate(offset, angle):
    """Offset 0: intersecting lines (d2 = 0); small angle: nearly parallel, still above the
    conditioning of the finite-difference step."""
    ea0, ea1 = np.array([0.0, 0.0, 0.0]), np.array([1.0, 0.0, 0.0])
    eb0 = np.array([0.5, 0.0, offset])
    eb1 = eb0 + np.array([np.cos(angle), np.sin(angle), 0.0])
    check_fd(*raw("line_line"), np.stack([ea0, ea1, eb0, eb1]), f"line_line offset {offset} angle {angle}",
             length_scale=min(1.0, angle))


# ------------------------------------------------------------------ typed distances
@pytest.mark.parametrize("xy", list(PT_REGION_POINTS.values()) + PT_BOUNDARY_POINTS)
@pytest.mark.parametrize("offset", OFFSETS)
def test_point_triangle_typed(xy, offset):
    x = np.stack(point_triangle_config(xy, offset))
    dtype = D.point_triangle_distance_type(*x)
    check_fd(*typed("point_triangle", dtype), x, f"point_triangle {xy} offset {offset} type {dtype}")


def test_point_triangle_typed_random():
    for i, x in enumerate(random_configs(4, 30, seed=11)):
        dtype = D.point_triangle_distance_type(*x)
        check_fd(*typed("point_triangle", dtype), x, f"point_triangle random #{i} type {dtype}")


@pytest.mark.parametrize("dtype", sorted(EE_REGION_EDGES))
@pytest.mark.parametrize("offset", OFFSETS)
def test_edge_edge_typed_regions(dtype, offset):
    x = np.stack(edge_edge_config(*EE_REGION_EDGES[dtype], offset))
    check_fd(*typed("edge_edge", dtype), x, f"edge_edge type {dtype} offset {offset}")


@pytest.mark.parametrize("xs", sorted(EE_PARALLEL_EDGES))
@pytest.mark.parametrize("slope", [0.0, 1e-12])
@pytest.mark.parametrize("y", [0.0, 1e-12, 0.5])
def test_edge_edge_typed_parallel(xs, slope, y):
    """Parallel and nearly parallel (|ea x eb| ~ 1e-12) edges, incl. collinear ones (y = 0)."""
    x = np.stack(parallel_edge_config(*xs, y, slope))
    dtype = D.edge_edge_distance_type(*x)
    assert dtype != D.EA_EB
    check_fd(*typed("edge_edge", dtype), x, f"edge_edge parallel {xs} y {y} slope {slope}")


def test_edge_edge_typed_random():
    for i, x in enumerate(random_configs(4, 30, seed=12)):
        dtype = D.edge_edge_distance_type(*x)
        check_fd(*typed("edge_edge", dtype), x, f"edge_edge random #{i} type {dtype}")


@pytest.mark.parametrize("ratio", [-0.5, 0.0, 0.3, 1.0, 1.5])
@pytest.mark.parametrize("offset", OFFSETS)
def test_point_edge_typed(ratio, offset):
    e0, e1 = np.array([0.0, 0.0, 0.0]), np.array([2.0, 0.0, 0.0])
    x = np.stack([np.array([2.0 * ratio, offset, 0.3 * offset]), e0, e1])
    dtype = D.point_edge_distance_type(*x)
    check_fd(*typed("point_edge", dtype), x, f"point_edge ratio {ratio} offset {offset}")


@pytest.mark.parametrize("name,k,types", [("point_edge", 3, range(3)), ("point_triangle", 4, range(7)),
                                          ("edge_edge", 4, range(9))])
def test_every_type_fd_random(name, k, types):
    """Each type's formula (not only the classified one) is a smooth function of x: FD-check all."""
    for i, x in enumerate(random_configs(k, 5, seed=100 + k)):
        for dtype in types:
            check_fd(*typed(name, dtype), x, f"{name} #{i} forced type {dtype}")


# ------------------------------------------------------------------ _into variants
def test_into_variants_overwrite_out():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(4, 3))
    cases = [
        ("point_point", x[:2], ()), ("point_line", x[:3], ()), ("point_plane", x, ()), ("line_line", x, ()),
        ("point_edge", x[:3], (D.PE_P_E,)), ("point_triangle", x, (D.P_E1,)), ("edge_edge", x, (D.EA_EB0,)),
    ]
    for name, verts, extra in cases:
        n = verts.size
        g = np.full(n, np.nan)
        H = np.full((n, n), np.nan)
        getattr(D, name + "_distance_squared_gradient_into")(*verts, *extra, g)
        getattr(D, name + "_distance_squared_hessian_into")(*verts, *extra, H)
        np.testing.assert_array_equal(g, getattr(D, name + "_distance_squared_gradient")(*verts, *extra))
        np.testing.assert_array_equal(H, getattr(D, name + "_distance_squared_hessian")(*verts, *extra))


def test_typed_uninvolved_rows_are_zero():
    x = np.random.default_rng(6).normal(size=(4, 3))
    g = D.point_triangle_distance_squared_gradient(*x, D.P_E1)  # p, t1, t2 only
    assert np.all(g[3:6] == 0.0) and np.any(g[6:] != 0.0)
    H = D.edge_edge_distance_squared_hessian(*x, D.EA1_EB0)  # ea1, eb0 only
    for b in (0, 3):
        assert np.all(H[3 * b:3 * b + 3, :] == 0.0) and np.all(H[:, 3 * b:3 * b + 3] == 0.0)
    # translation invariance: each gradient sums to zero per coordinate
    for dtype in range(9):
        g = D.edge_edge_distance_squared_gradient(*x, dtype)
        np.testing.assert_allclose(g.reshape(4, 3).sum(axis=0), 0.0, atol=1e-12)


def test_gradient_into_returns_value():
    rng = np.random.default_rng(8)
    for _ in range(20):
        x = rng.normal(size=(4, 3))
        g = np.empty(12)
        for dtype in range(9):
            d2 = D.edge_edge_distance_squared_gradient_into(*x, dtype, g)
            assert d2 == pytest.approx(D.edge_edge_distance_squared(*x, dtype), rel=1e-13)
        for dtype in range(7):
            d2 = D.point_triangle_distance_squared_gradient_into(*x, dtype, g)
            assert d2 == pytest.approx(D.point_triangle_distance_squared(*x, dtype), rel=1e-13)
        g9 = np.empty(9)
        for dtype in range(3):
            d2 = D.point_edge_distance_squared_gradient_into(*x[:3], dtype, g9)
            assert d2 == pytest.approx(D.point_edge_distance_squared(*x[:3], dtype), rel=1e-13)
        assert D.line_line_distance_squared_gradient_into(*x, g) == pytest.approx(
            D.line_line_distance_squared(*x), rel=1e-13)
        assert D.point_plane_distance_squared_gradient_into(*x, g) == pytest.approx(
            D.point_plane_distance_squared(*x), rel=1e-13)
        assert D.point_line_distance_squared_gradient_into(*x[:3], g9) == pytest.approx(
            D.point_line_distance_squared(*x[:3]), rel=1e-13)
        assert D.point_point_distance_squared_gradient_into(x[0], x[1], np.empty(6)) == pytest.approx(
            D.point_point_distance_squared(x[0], x[1]), rel=1e-13)
