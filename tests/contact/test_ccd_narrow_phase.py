"""Single-pair additive CCD: benchmark queries with exact ground truth, hand-made cases, ipctk comparison."""
from __future__ import annotations

import math
from fractions import Fraction

import ipctk
import numpy as np
import pytest

import ipcsim.contact.ccd as ccd


QUERY_FILES = [
    "unit-tests_edge-edge_0.csv",
    "unit-tests_edge-edge_1.csv",
    "unit-tests_vertex-face_0.csv",
    "unit-tests_vertex-face_1.csv",
]
# False positives measured with this implementation (the same counts as ipctk's AdditiveCCD on these
# files): queries whose truth is 0 that we still report as colliding. A regression above these fails.
FALSE_POSITIVE_BOUND = {
    "unit-tests_edge-edge_0.csv": 15,  # of 54 queries, 33 negatives
    "unit-tests_edge-edge_1.csv": 0,  # of 20 queries, 5 negatives
    "unit-tests_vertex-face_0.csv": 12,  # of 125 queries, 90 negatives
    "unit-tests_vertex-face_1.csv": 6,  # of 125 queries, 36 negatives
}


def load_queries(path):
    """(n, 8, 3) float64 vertex positions (exact rationals rounded to nearest) and (n,) bool truth."""
    rows = [line.strip().split(",") for line in path.read_text().splitlines() if line.strip()]
    assert len(rows) % 8 == 0
    pts = np.array(
        [[float(Fraction(int(r[2 * k]), int(r[2 * k + 1]))) for k in range(3)] for r in rows]
    ).reshape(-1, 8, 3)
    truth = np.array([int(r[6]) for r in rows]).reshape(-1, 8)
    assert (truth == truth[:, :1]).all()
    return pts, truth[:, 0].astype(bool)


def toi_function(name):
    return ccd.edge_edge_toi if "edge-edge" in name else ccd.point_triangle_toi


def ipctk_ccd(name, q, min_distance=0.0):
    accd = ipctk.AdditiveCCD()
    args = [q[i] for i in range(8)]
    if "edge-edge" in name:
        return accd.edge_edge_ccd(*args, min_distance=min_distance)
    return accd.point_triangle_ccd(*args, min_distance=min_distance)


@pytest.mark.parametrize("name", QUERY_FILES)
def test_benchmark_queries_no_false_negatives(shared_data, name):
    pts, truth = load_queries(shared_data / "ccd" / name)
    toi_fn = toi_function(name)
    tois = np.array([toi_fn(q[:4], q[4:]) for q in pts])
    hit = tois <= 1.0
    assert np.all((tois >= 0.0) & ((tois <= 1.0) | np.isinf(tois)))
    false_negatives = np.flatnonzero(truth & ~hit)
    assert false_negatives.size == 0, f"{name}: missed colliding queries {false_negatives.tolist()}"
    false_positives = int(np.count_nonzero(~truth & hit))
    ipctk_fp = sum(1 for q, t in zip(pts, truth) if not t and ipctk_ccd(name, q)[0])
    print(f"{name}: {len(pts)} queries, {truth.sum()} colliding, "
          f"false positives {false_positives} (ipctk ACCD {ipctk_fp})")
    assert false_positives <= FALSE_POSITIVE_BOUND[name]
    assert false_positives <= ipctk_fp


@pytest.mark.parametrize("name", QUERY_FILES)
@pytest.mark.parametrize("min_distance", [1e-6, 1e-3])
def test_benchmark_queries_min_distance_more_conservative(shared_data, name, min_distance):
    """A positive min_distance reports every collision reported without it, and stops before the distance
    reaches min_distance. (The ACCD times themselves are not monotone in min_distance: a different step
    sequence can end slightly later, still before the min_distance contact.)"""
    pts, truth = load_queries(shared_data / "ccd" / name)
    toi_fn = toi_function(name)
    kind = "ee" if "edge-edge" in name else "pt"
    n_hit_0 = n_hit_md = 0
    for i, q in enumerate(pts):
        t0 = toi_fn(q[:4], q[4:])
        t_md = toi_fn(q[:4], q[4:], min_distance=min_distance)
        n_hit_0 += t0 <= 1.0
        n_hit_md += t_md <= 1.0
        if t0 <= 1.0:
            assert t_md <= 1.0, f"{name} query {i}: reported without min_distance, missed with {min_distance}"
        if t_md > 0.0:
            assert sampled_min_distance(kind, q[:4], q[4:], min(t_md, 1.0), n=101) > min_distance
    assert n_hit_md >= n_hit_0


# ----------------------------------------------------------------------------- hand-made cases
def triangle():
    return np.array([[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [0.0, 1.0, 0.0]])


def test_point_into_triangle_head_on():
    # the point falls from z = 1 to z = -1 through the triangle's interior: contact at t = 0.5
    x0 = np.vstack([[0.0, 0.0, 1.0], triangle()])
    x1 = x0.copy()
    x1[0, 2] = -1.0
    toi = ccd.point_triangle_toi(x0, x1)
    assert 0.5 * 0.8 <= toi < 0.5
    # keeping min_distance 0.2 means stopping before z = 0.2, i.e. t = 0.4
    toi_md = ccd.point_triangle_toi(x0, x1, min_distance=0.2)
    assert 0.4 * 0.8 <= toi_md < 0.4


def test_point_and_triangle_both_moving():
    # the point moves down, the triangle up: they meet at t = 0.25 (z = 0.5)
    x0 = np.vstack([[0.2, 0.1, 1.0], triangle()])
    x1 = x0.copy()
    x1[0, 2] -= 2.0
    x1[1:, 2] += 2.0
    toi = ccd.point_triangle_toi(x0, x1)
    assert 0.25 * 0.8 <= toi < 0.25


def test_point_misses_triangle():
    x0 = np.vstack([[3.0, 0.0, 1.0], triangle()])
    x1 = x0.copy()
    x1[0, 2] = -1.0
    assert ccd.point_triangle_toi(x0, x1) == math.inf


def test_point_through_triangle_vertex_and_edge():
    for target in (triangle()[2], 0.5 * (triangle()[0] + triangle()[1])):
        x0 = np.vstack([target + [0.0, 0.0, 1.0], triangle()])
        x1 = np.vstack([target + [0.0, 0.0, -3.0], triangle()])
        toi = ccd.point_triangle_toi(x0, x1)
        assert 0.25 * 0.8 <= toi < 0.25


def test_crossing_edges():
    # edge a sweeps down through edge b (perpendicular, crossing at the origin) at t = 0.5
    x0 = np.array([[-1.0, 0.0, 1.0], [1.0, 0.0, 1.0], [0.0, -1.0, 0.0], [0.0, 1.0, 0.0]])
    x1 = x0.copy()
    x1[:2, 2] = -1.0
    toi = ccd.edge_edge_toi(x0, x1)
    assert 0.5 * 0.8 <= toi < 0.5


def test_edges_passing_beside_each_other():
    x0 = np.array([[-1.0, 0.0, 1.0], [1.0, 0.0, 1.0], [2.0, -1.0, 0.0], [2.0, 1.0, 0.0]])
    x1 = x0.copy()
    x1[:2, 2] = -1.0
    # the closest approach is 1 (ea1 passes eb at x distance 1), so there is no contact...
    assert ccd.edge_edge_toi(x0, x1) == math.inf
    # ...but with min_distance 1.2 they come too close: distance(t) = sqrt(1 + (1 - 2t)^2) = 1.2 at
    # t = (1 - sqrt(0.44)) / 2
    t_contact = (1.0 - math.sqrt(0.44)) / 2.0
    toi = ccd.edge_edge_toi(x0, x1, min_distance=1.2)
    assert 0.5 * t_contact <= toi < t_contact
    # and with 1.5 they already are too close at t = 0 (distance sqrt(2))
    assert ccd.edge_edge_toi(x0, x1, min_distance=1.5) == 0.0


def test_grazing_edges():
    # edge a slides down to touch edge b exactly at t = 1 (tangential contact at the end)
    x0 = np.array([[-1.0, 0.0, 1.0], [1.0, 0.0, 1.0], [0.0, -1.0, 0.0], [0.0, 1.0, 0.0]])
    x1 = x0.copy()
    x1[:2, 2] = 0.0
    toi = ccd.edge_edge_toi(x0, x1)
    assert 0.8 <= toi < 1.0
    # stopping at a distance above (1 - s) d0 = 0.1 (ACCD's gap): no contact reported
    x1[:2, 2] = 0.2
    assert ccd.edge_edge_toi(x0, x1) == math.inf


def test_point_grazing_triangle_vertex():
    # the point moves in the triangle's plane along y = 1 and touches only the vertex (0, 1, 0) at t = 0.5
    x0 = np.vstack([[-2.0, 1.0, 0.0], triangle()])
    x1 = np.vstack([[2.0, 1.0, 0.0], triangle()])
    toi = ccd.point_triangle_toi(x0, x1)
    assert 0.5 * 0.8 <= toi < 0.5
    # the same line lifted by 0.5 above the plane passes 0.5 from the vertex: no contact
    x0[0, 2] = x1[0, 2] = 0.5
    assert ccd.point_triangle_toi(x0, x1) == math.inf


def test_parallel_sliding_edges():
    # parallel edges 0.1 apart sliding along each other: never touch
    x0 = np.array([[0.0, 0.0, 0.1], [1.0, 0.0, 0.1], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    x1 = x0.copy()
    x1[:2, 0] += 3.0
    assert ccd.edge_edge_toi(x0, x1) == math.inf
    # approaching while sliding 3 along: edge a has left edge b's span (t > 1/3) before the gap closes
    x1[:2, 2] = -0.1
    assert ccd.edge_edge_toi(x0, x1) == math.inf
    # approaching while sliding 0.5 along: the gap closes at t = 0.5 over the overlapping span
    x1[:2, 0] = x0[:2, 0] + 0.5
    toi = ccd.edge_edge_toi(x0, x1)
    assert 0.5 * 0.8 <= toi < 0.5
    # min_distance 0.05: no later than when the gap is 0.05, t = 0.25
    toi = ccd.edge_edge_toi(x0, x1, min_distance=0.05)
    assert 0.25 * 0.8 <= toi < 0.25


def test_already_touching_gives_zero():
    x0 = np.vstack([[0.0, 0.0, 0.0], triangle()])  # point on the triangle
    x1 = x0 + [0.0, 0.0, 1.0]
    assert ccd.point_triangle_toi(x0, x1) == 0.0
    e = np.array([[-1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 1.0, 0.0]])
    assert ccd.edge_edge_toi(e, e + 1.0) == 0.0
    # within min_distance at t = 0
    x0 = np.vstack([[0.0, 0.0, 0.01], triangle()])
    assert ccd.point_triangle_toi(x0, x0 + [0.0, 0.0, 1.0], min_distance=0.02) == 0.0


def test_static_and_rigid_translation_give_inf():
    x0 = np.vstack([[0.0, 0.0, 1e-4], triangle()])
    assert ccd.point_triangle_toi(x0, x0) == math.inf
    assert ccd.point_triangle_toi(x0, x0 + [5.0, -2.0, 7.0]) == math.inf
    e = np.array([[-1.0, 0.0, 1e-4], [1.0, 0.0, 1e-4], [0.0, -1.0, 0.0], [0.0, 1.0, 0.0]])
    assert ccd.edge_edge_toi(e, e) == math.inf
    assert ccd.edge_edge_toi(e, e - 3.0) == math.inf


def test_point_edge_and_point_point():
    # point falls onto the middle of a segment at t = 0.5
    x0 = np.array([[0.0, 1.0, 0.0], [-1.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    x1 = x0.copy()
    x1[0, 1] = -1.0
    toi = ccd.point_edge_toi(x0, x1)
    assert 0.5 * 0.8 <= toi < 0.5
    x0[0, 0] = x1[0, 0] = 3.0  # passes 2 beside the segment's end
    assert ccd.point_edge_toi(x0, x1) == math.inf
    p0 = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    p1 = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])  # swap places: meet at t = 0.5
    toi = ccd.point_point_toi(p0, p1)
    assert 0.5 * 0.8 <= toi < 0.5
    assert ccd.point_point_toi(p0, p0 + 1.0) == math.inf


def test_point_plane():
    n = [0.0, 1.0, 0.0]
    o = [0.0, -1.0, 0.0]
    # falls from y = 1 to y = -3 through the plane y = -1: contact at t = 0.5
    toi = ccd.point_plane_toi([0.3, 1.0, 0.2], [0.3, -3.0, 0.2], o, n)
    assert 0.5 * 0.8 <= toi < 0.5
    assert ccd.point_plane_toi([0.3, 1.0, 0.2], [0.3, 0.0, 0.2], o, n) == math.inf
    assert ccd.point_plane_toi([0.3, 1.0, 0.2], [0.3, -3.0, 0.2], o, n, min_distance=1.0) < 0.25
    assert ccd.point_plane_toi([0.0, -2.0, 0.0], [0.0, 5.0, 0.0], o, n) == 0.0  # starts inside the half-space
    # a normal that is not unit length is normalised
    assert ccd.point_plane_toi([0.3, 1.0, 0.2], [0.3, -3.0, 0.2], o, [0.0, 7.0, 0.0]) == toi


# ----------------------------------------------------------------------------- random trajectories
def sampled_min_distance(kind, x0, x1, t_end, n=2001):
    """Smallest ipctk distance over n samples of [0, t_end] (an upper bound of the true minimum)."""
    best = math.inf
    for t in np.linspace(0.0, t_end, n):
        x = x0 + t * (x1 - x0)
        if kind == "pt":
            d2 = ipctk.point_triangle_distance(x[0], x[1], x[2], x[3])
        else:
            d2 = ipctk.edge_edge_distance(x[0], x[1], x[2], x[3])
        best = min(best, math.sqrt(d2))
    return best


@pytest.mark.parametrize("kind", ["pt", "ee"])
def test_random_trajectories_against_ipctk(kind):
    rng = np.random.default_rng(7 if kind == "pt" else 8)
    fn = ccd.point_triangle_toi if kind == "pt" else ccd.edge_edge_toi
    accd = ipctk.AdditiveCCD()
    ipc_fn = accd.point_triangle_ccd if kind == "pt" else accd.edge_edge_ccd
    n_hits = 0
    for _ in range(150):
        x0 = rng.uniform(-1.0, 1.0, (4, 3))
        x1 = x0 + rng.normal(0.0, 0.3, (4, 3))
        # aim the first primitive through the second one's centre, half of the time
        if rng.random() < 0.5:
            first = slice(0, 1) if kind == "pt" else slice(0, 2)
            centre = x1[first.stop:].mean(axis=0)
            x1[first] += 2.0 * (centre - x0[first].mean(axis=0))
        min_distance = float(rng.choice([0.0, 0.0, 0.05]))
        d0 = sampled_min_distance(kind, x0, x1, 0.0, n=1)
        if d0 <= min_distance + 1e-3:
            continue
        toi = fn(x0, x1, min_distance=min_distance)
        hit, ipc_toi = ipc_fn(*x0, *x1, min_distance=min_distance)
        # the same algorithm: same decision and (up to rounding) the same time
        assert (toi <= 1.0) == hit
        if hit:
            n_hits += 1
            assert toi == pytest.approx(ipc_toi, rel=1e-9, abs=1e-12)
            # never after the first contact: the distance stays above min_distance on [0, toi]
            assert sampled_min_distance(kind, x0, x1, toi) > min_distance
        else:
            assert sampled_min_distance(kind, x0, x1, 1.0) > min_distance
    assert n_hits >= 20  # the sample exercises collisions


# ----------------------------------------------------------------------------- bad input
def test_bad_input():
    x = np.zeros((4, 3))
    with pytest.raises(ValueError, match="point-triangle"):
        ccd.point_triangle_toi(np.zeros((3, 3)), x)
    with pytest.raises(ValueError, match="edge-edge"):
        ccd.edge_edge_toi(x, np.full((4, 3), np.nan))
    with pytest.raises(ValueError, match="point-edge"):
        ccd.point_edge_toi(x, x)
    with pytest.raises(ValueError, match="min_distance"):
        ccd.point_triangle_toi(x, x, min_distance=-1.0)
    with pytest.raises(ValueError, match="conservative_rescaling"):
        ccd.edge_edge_toi(x, x, conservative_rescaling=0.0)
    with pytest.raises(ValueError, match="normal"):
        ccd.point_plane_toi([0, 1, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0])
    with pytest.raises(ValueError, match="p1"):
        ccd.point_plane_toi([0, 1, 0], [0, 0], [0, 0, 0], [0, 1, 0])


# ----------------------------------------------------------------------------- njit kernels
def test_kernel_tmax_prunes_exactly():
    """additive_ccd(tmax) gives the tmax=1 time when it is below tmax and +inf otherwise (so pruning with
    the best time found so far never changes a minimum)."""
    from ipcsim.contact.ccd import additive_ccd
    from ipcsim.contact.collisions_data import EE, FV

    rng = np.random.default_rng(3)
    x, dx = np.empty((4, 3)), np.empty((4, 3))
    n_checked = 0
    for _ in range(200):
        kind = FV if rng.random() < 0.5 else EE
        x0 = rng.uniform(-1.0, 1.0, (4, 3))
        x1 = x0 + rng.normal(0.0, 0.3, (4, 3))
        x1[0] += 2.0 * (x1[2:].mean(axis=0) - x0[0])
        t = additive_ccd(kind, x0, x1, 0.0, 1.0, 0.9, 10**6, x, dx)
        if not 0.0 < t <= 1.0:
            continue
        n_checked += 1
        assert additive_ccd(kind, x0, x1, 0.0, min(1.0, 1.01 * t), 0.9, 10**6, x, dx) == t
        assert additive_ccd(kind, x0, x1, 0.0, 0.99 * t, 0.9, 10**6, x, dx) == math.inf
        assert additive_ccd(kind, x0, x1, 0.0, t, 0.9, 10**6, x, dx) == math.inf
    assert n_checked >= 30


def test_max_iterations_returns_conservative_time():
    # parallel edges 1e-3 apart sliding 1 along each other: never touch, but ACCD needs ~1000 steps
    x0 = np.array([[0.0, 0.0, 1e-3], [1.0, 0.0, 1e-3], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    x1 = x0.copy()
    x1[:2, 0] += 0.5
    assert ccd.edge_edge_toi(x0, x1) == math.inf
    t = ccd.edge_edge_toi(x0, x1, max_iterations=10)
    assert 0.0 < t < 0.1  # stopped early: a safe but short time, never +inf
    with pytest.raises(ValueError, match="max_iterations"):
        ccd.edge_edge_toi(x0, x1, max_iterations=0)
