"""Half-space (plane-vertex) contact against ipctk's plane support: active set, barrier value / gradient /
Hessian, lagged friction and the CCD step size, on randomized and degenerate configurations, with mesh
contact in the same scene.

ipctk 1.6.1's own ``NormalCollisions.build(mesh, x, dhat)`` pairs a vertex with a plane only when its
distance is below the broad phase's inflation radius dhat / 2, so a vertex between dhat / 2 and dhat gets
no barrier there although b(d) > 0 for every d < dhat (on the "inclined" scene below it keeps 3 of the 7
plane contacts). The comparisons therefore hand ipctk candidates built with radius dhat; its narrow phase
then keeps exactly the pairs with d < dhat, as ipcsim does.
"""
from __future__ import annotations

import numpy as np
import pytest

from _barrier_scenes import grid
from ipcsim.contact.barrier_potential import (barrier_potential, barrier_potential_gradient,
                                              barrier_potential_hessian)
from ipcsim.contact.collisions import build_collisions
from ipcsim.contact.collisions_data import PV
from ipcsim.contact.friction import FrictionCollisions, FrictionPotential
from ipcsim.geometry.collision_mesh import CollisionMesh, Plane
import ipcsim.contact.ccd as ccd

import ipctk  # noqa: E402  (the test oracle, a test dependency)
ipctk.set_logger_level(ipctk.LoggerLevel.error)

DHAT = 0.05
KAPPA = 2.0
MU = 0.4


def _unit(v):
    v = np.asarray(v, float)
    return v / np.linalg.norm(v)


def _sheets_over_planes(seed):
    """Two jittered 8 x 8 sheets 0.5 dhat apart (mesh contact) over an inclined plane whose closest
    vertex is 0.02 dhat away, and a steep wall plane touching the sheets' x = 0 column."""
    rng = np.random.default_rng(seed)
    v0, f0 = grid(8, 0.0)
    v1, f1 = grid(8, 0.5 * DHAT)
    x = np.vstack([v0, v1]) + rng.uniform(-0.2, 0.2, (128, 3)) * DHAT
    n = _unit([*rng.uniform(-0.3, 0.3, 2), 1.0])
    wall = _unit([1.0, rng.uniform(-0.2, 0.2), 0.1])
    planes = [Plane(origin=n * (x[:64] @ n).min() - 0.02 * DHAT * n, normal=n),
              Plane(origin=wall * ((x @ wall).min() - 0.3 * DHAT), normal=wall)]
    mesh = CollisionMesh.from_triangle_mesh(x, np.vstack([f0, f1 + 64]))
    mesh.planes = planes
    return mesh, x


def _points_at(distances, normal, origin=(0.1, -0.2, 0.3)):
    """Free points at the given signed distances [m] from the plane through ``origin`` with ``normal``,
    spread 4 dhat apart along it (no point-point contact); the first one at origin + d n."""
    n = _unit(normal)
    t1 = _unit(np.cross(n, [0.3, 1.0, 0.2]))
    t2 = np.cross(n, t1)
    o = np.array(origin, float)
    k = np.arange(len(distances))
    x = o + np.outer(distances, n) + np.outer(4 * DHAT * (k % 5), t1) + np.outer(4 * DHAT * (k // 5), t2)
    mesh = CollisionMesh.from_points(x)
    mesh.planes = [Plane(origin=o, normal=n)]
    return mesh, x


SCENES = {
    "inclined": lambda: _sheets_over_planes(1),
    "inclined_seed7": lambda: _sheets_over_planes(7),
    # just inside / outside dhat (1e-9 relative), exactly dhat on an axis-aligned plane (inactive: d < dhat)
    "near_dhat": lambda: _points_at(DHAT * np.array([1 - 1e-9, 1 + 1e-9, 1 - 1e-6, 0.999, 1.001, 0.5 - 1e-12]),
                                    [0.2, -0.4, 1.0]),
    "exactly_dhat": lambda: _points_at([DHAT, 0.5 * DHAT, 0.0625], [0.0, 0.0, 1.0], origin=(0.1, -0.2, 0.0)),
    # tiny distances: b'' ~ 1 / d^2 is huge; the comparison is relative
    "tiny": lambda: _points_at(DHAT * np.array([1e-9, 1e-6, 1e-3, 0.3]), [-0.7, 0.1, 0.6]),
    # behind the plane within dhat (|d| < dhat counts in both; ipctk also pairs a vertex further behind, whose
    # barrier is zero: not compared)
    "behind": lambda: _points_at(DHAT * np.array([-0.5, 0.25, 1.5]), [0.0, 1.0, 0.0]),
}


def _ipctk_mesh(mesh, x):
    im = ipctk.CollisionMesh(x, mesh.edges.astype(np.int32), mesh.faces.astype(np.int32))
    im.planes = [ipctk.Hyperplane(p.normal, p.origin) for p in mesh.planes]
    return im


def _ipctk_set(mesh, x, area):
    im = _ipctk_mesh(mesh, x)
    cands = ipctk.Candidates()
    cands.build(im, x, DHAT)  # radius dhat: every plane-vertex pair with d < dhat (see the module docstring)
    nc = ipctk.NormalCollisions()
    nc.use_area_weighting = area
    nc.build(cands, im, x, DHAT)
    return nc, im


def _plane_index(mesh, plane):
    """Index in mesh.planes of an ipctk Hyperplane."""
    n, off = np.asarray(plane.normal()).ravel(), plane.offset()
    hits = [k for k, p in enumerate(mesh.planes) if np.allclose(p.normal, n, atol=1e-15)
            and abs(-p.normal @ p.origin - off) <= 1e-15]
    assert len(hits) == 1
    return hits[0]


def _pv_dicts(col, nc, mesh):
    ours = {(int(p[0]), int(p[1])): float(w) for k, p, w in zip(col.kind, col.primitives, col.weight) if k == PV}
    theirs = {(_plane_index(mesh, c.plane), int(c.vertex_id)): float(c.weight) for c in nc.pv_collisions}
    return ours, theirs


@pytest.mark.parametrize("name", list(SCENES))
@pytest.mark.parametrize("area", [False, True])
def test_active_set_matches_ipctk(name, area):
    mesh, x = SCENES[name]()
    col = build_collisions(mesh, x, DHAT, use_area_weighting=area)
    nc, _ = _ipctk_set(mesh, x, area)
    ours, theirs = _pv_dicts(col, nc, mesh)
    assert ours.keys() == theirs.keys()
    assert len(ours) > 0
    for k in ours:
        assert ours[k] == pytest.approx(theirs[k], rel=1e-14, abs=0.0)  # measured: equal, or 1 ulp
    n_ipctk = sum(len(g) for g in (nc.vv_collisions, nc.ev_collisions, nc.ee_collisions, nc.fv_collisions))
    assert len(col) - len(ours) == n_ipctk  # the mesh stencils alongside are the same count too


def test_scenes_hit_the_boundaries():
    """The degenerate scenes are what they claim: which points are active, by the plane's distance."""
    expected = {"near_dhat": [0, 2, 3, 5], "exactly_dhat": [1], "tiny": [0, 1, 2, 3], "behind": [0, 1]}
    for name, active in expected.items():
        mesh, x = SCENES[name]()
        col = build_collisions(mesh, x, DHAT)
        assert sorted(col.primitives[col.kind == PV, 1].tolist()) == active, name
    mesh, x = SCENES["inclined"]()
    col = build_collisions(mesh, x, DHAT)
    pv = col.primitives[col.kind == PV]
    assert set(pv[:, 0].tolist()) == {0, 1} and col.count(PV) < len(col)  # both planes and mesh contact


def test_obstacle_vertices_never_meet_planes():
    """ipcsim's planes are obstacles: an obstacle sheet lying within dhat of a plane gets no pair (ipctk,
    which knows no obstacles, pairs them); the simulated sheet's pairs are ipctk's."""
    mesh, x = _sheets_over_planes(3)
    lower = CollisionMesh.from_triangle_mesh(x[:64], mesh.faces[: len(mesh.faces) // 2], body=0, is_obstacle=True)
    upper = CollisionMesh.from_triangle_mesh(x[64:], mesh.faces[len(mesh.faces) // 2:] - 64, body=1)
    both = CollisionMesh.concatenate([lower, upper])
    both.planes = mesh.planes
    col = build_collisions(both, x, DHAT)
    nc, _ = _ipctk_set(both, x, False)
    ours, theirs = _pv_dicts(col, nc, both)
    assert any(v < 64 for _, v in theirs)
    assert ours.keys() == {k for k in theirs if k[1] >= 64}


# relative tolerances (value, gradient / force, Hessian). Measured on "inclined": 7e-16, 2e-14, 9e-14 (barrier),
# 2e-15, 2e-14, 3e-14 (friction), 4e-14 (lagged forces). On "tiny" the point's distance 5e-11 m carries a
# rounding error ~1e-17 m (coordinates ~0.3 m) in either code, 2e-7 relative: measured 1.1e-8 in the barrier's
# value, 4.6e-7 in its gradient, the lagged forces and friction, 9.1e-7 in the barrier's Hessian.
TOL = {"tiny": (1e-6, 1e-5, 2e-5)}
DEFAULT_TOL = (1e-13, 1e-12, 5e-12)


@pytest.mark.parametrize("name", list(SCENES))
@pytest.mark.parametrize("area,physical", [(False, False), (True, True), (False, True)])
def test_barrier_matches_ipctk(name, area, physical):
    mesh, x = SCENES[name]()
    col = build_collisions(mesh, x, DHAT, use_area_weighting=area)
    nc, im = _ipctk_set(mesh, x, area)
    b = ipctk.BarrierPotential(DHAT, KAPPA, physical)
    tv, tg, th = TOL.get(name, DEFAULT_TOL)
    assert barrier_potential(col, mesh, x, KAPPA, physical) == pytest.approx(b(nc, im, x), rel=tv, abs=0.0)
    g_ref = b.gradient(nc, im, x)
    g = barrier_potential_gradient(col, mesh, x, KAPPA, physical)
    assert np.abs(g - g_ref).max() <= tg * np.abs(g_ref).max()
    psd = ipctk.PSDProjectionMethod
    for ours, theirs in [("none", psd.NONE), ("clamp", psd.CLAMP), ("abs", psd.ABS), ("analytic", psd.CLAMP)]:
        h_ref = b.hessian(nc, im, x, theirs)
        h = barrier_potential_hessian(col, mesh, x, KAPPA, physical, project=ours)
        assert abs(h - h_ref).max() <= th * abs(h_ref).max(), ours


@pytest.mark.parametrize("name", ["inclined", "inclined_seed7"])
def test_improved_max_approximator_with_planes_matches_ipctk(name):
    """The convergent formulation (area weights, improved max approximator, physical barrier) with planes and
    mesh contact together. ipctk merges edge-edge terms in the order its candidates come, so both sets are built
    from ipctk's candidates (plane pairs included) on one ipctk thread."""
    from ipcsim.contact.broad_phase import Candidates

    mesh, x = SCENES[name]()
    im = _ipctk_mesh(mesh, x)
    threads = ipctk.get_num_threads()
    ipctk.set_num_threads(1)
    try:
        cands = ipctk.Candidates()
        cands.build(im, x, DHAT)
        nc = ipctk.NormalCollisions()
        nc.use_area_weighting = True
        nc.collision_set_type = ipctk.NormalCollisions.CollisionSetType.IMPROVED_MAX_APPROX
        nc.build(cands, im, x, DHAT)
    finally:
        ipctk.set_num_threads(threads)
    pairs = {"vf": [(k.vertex_id, k.face_id) for k in cands.fv_candidates],
             "ee": [(k.edge0_id, k.edge1_id) for k in cands.ee_candidates],
             "ev": [(k.edge_id, k.vertex_id) for k in cands.ev_candidates],
             "vv": [(k.vertex0_id, k.vertex1_id) for k in cands.vv_candidates],
             "pv": [(_plane_index(mesh, k.plane), k.vertex_id) for k in cands.pv_candidates]}
    ours = Candidates(**{k: np.array(v, np.int64).reshape(-1, 2) for k, v in pairs.items()})
    col = build_collisions(mesh, x, DHAT, candidates=ours, use_area_weighting=True,
                           use_improved_max_approximator=True)
    assert np.any(col.weight < 0) and col.count(PV) > 0
    b = ipctk.BarrierPotential(DHAT, KAPPA, True)
    # measured: value 2e-15, gradient 4e-14, Hessian 9e-14 (relative)
    assert barrier_potential(col, mesh, x, KAPPA, True) == pytest.approx(b(nc, im, x), rel=1e-13, abs=0.0)
    g_ref = b.gradient(nc, im, x)
    assert np.abs(barrier_potential_gradient(col, mesh, x, KAPPA, True) - g_ref).max() <= 1e-12 * np.abs(g_ref).max()
    for ours_psd, theirs in [("none", ipctk.PSDProjectionMethod.NONE), ("clamp", ipctk.PSDProjectionMethod.CLAMP)]:
        h_ref = b.hessian(nc, im, x, theirs)
        h = barrier_potential_hessian(col, mesh, x, KAPPA, True, project=ours_psd)
        assert abs(h - h_ref).max() <= 5e-12 * abs(h_ref).max(), ours_psd


@pytest.mark.parametrize("d_rel", [1e-9, 1e-4, 0.5, 1 - 1e-4])
def test_plane_vertex_barrier_finite_differences(d_rel):
    """Gradient and Hessian of one inclined plane-vertex stencil against central differences, from a
    tiny distance to just below dhat (where b, b' and b'' all vanish); the point sits at d n from the plane's
    origin 0, so its distance carries no rounding error larger than its own."""
    mesh, x = _points_at([d_rel * DHAT], [0.3, -0.5, 1.0], origin=(0.0, 0.0, 0.0))
    col = build_collisions(mesh, x, DHAT)
    assert col.count(PV) == 1
    eps = 1e-3 * DHAT * min(d_rel, 1.0 - d_rel)
    f = lambda y: barrier_potential(col, mesh, y.reshape(-1, 3), KAPPA)  # noqa: E731
    grad = lambda y: barrier_potential_gradient(col, mesh, y.reshape(-1, 3), KAPPA)  # noqa: E731
    g, h = grad(x), barrier_potential_hessian(col, mesh, x, KAPPA, project="none").toarray()
    x0, e3 = x.ravel(), np.eye(3)
    fd_g = np.array([(f(x0 + eps * e) - f(x0 - eps * e)) / (2 * eps) for e in e3])
    fd_h = np.array([(grad(x0 + eps * e) - grad(x0 - eps * e)) / (2 * eps) for e in e3])
    assert np.abs(g).max() > 0 and np.abs(h).max() > 0
    np.testing.assert_allclose(g, fd_g, rtol=1e-5, atol=1e-7 * np.abs(g).max())
    np.testing.assert_allclose(h, fd_h.T, rtol=1e-5, atol=1e-7 * np.abs(h).max())


# ------------------------------------------------------------------------------------ friction
def _friction_both(mesh, x, area, physical):
    """Our lagged set (from our own active set) and ipctk's, whose plane-vertex stencils are in ``tc[i]``
    (its Python ``*_collisions`` lists show the mesh kinds only)."""
    col = build_collisions(mesh, x, DHAT, use_area_weighting=area)
    nc, im = _ipctk_set(mesh, x, area)
    tc = ipctk.TangentialCollisions()
    tc.build(im, x, nc, ipctk.BarrierPotential(DHAT, KAPPA, physical), MU)
    pv = {}  # (plane, vertex): (lambda, weight, mu, tangent basis), copied out (a kept tc[i] crashed at exit)
    for i in range(len(tc)):
        t = tc[i]
        if isinstance(t, ipctk.PlaneVertexTangentialCollision):
            pv[(_plane_index(mesh, t.plane), int(t.vertex_id))] = (
                float(t.normal_force_magnitude), float(t.weight), float(t.mu_k), np.array(t.tangent_basis))
        del t
    fc = FrictionCollisions.build(col, mesh, x, KAPPA, MU, use_physical_barrier=physical)
    return fc, tc, pv, im


@pytest.mark.parametrize("name", ["inclined", "inclined_seed7", "tiny", "behind"])
@pytest.mark.parametrize("area,physical", [(False, False), (True, True)])
def test_friction_matches_ipctk(name, area, physical):
    mesh, x = SCENES[name]()
    fc, tc, pv, im = _friction_both(mesh, x, area, physical)
    rows = np.flatnonzero(fc.kind == PV)
    assert len(fc) == len(tc) and len(rows) == len(pv) > 0
    eps_u = 1e-3 * DHAT
    D, Dref = FrictionPotential(eps_u, 1.0), ipctk.FrictionPotential(eps_u)
    rng = np.random.default_rng(11)
    tol = (TOL[name][1],) * 3 if name in TOL else DEFAULT_TOL  # "tiny": every friction quantity 4.6e-7
    for i in rows:  # lagged normal force, weight, coefficient, tangent basis of every plane-vertex stencil
        lam, w, mu, basis = pv[(int(fc.primitives[i, 0]), int(fc.vertices[i, 0]))]
        assert fc.normal_force[i] == pytest.approx(lam, rel=tol[1], abs=0.0)
        assert (fc.weight[i], fc.mu[i]) == (pytest.approx(w, rel=1e-14, abs=0.0), mu)
        np.testing.assert_allclose(fc.tangent_basis[i], basis, atol=1e-14)
        assert fc.tangent_basis[i].T @ mesh.planes[fc.primitives[i, 0]].normal == pytest.approx([0, 0], abs=1e-15)
    for scale in (0.1, 1.0, 30.0):  # static, transition and sliding regimes
        u = rng.normal(size=x.shape) * scale * eps_u
        # measured: see TOL
        assert D(fc, u) == pytest.approx(Dref(tc, im, u), rel=tol[0], abs=0.0)
        g_ref = Dref.gradient(tc, im, u)
        assert np.abs(D.gradient(fc, u) - g_ref).max() <= tol[1] * np.abs(g_ref).max()
        h_ref = Dref.hessian(tc, im, u)
        assert abs(D.hessian(fc, u, False) - h_ref).max() <= tol[2] * abs(h_ref).max()


# ------------------------------------------------------------------------------------ CCD
def _plane_toi_ref(mesh, x0, x1, rescaling):
    """min over every (plane, vertex) of ipctk's point-static-plane time of impact (1 if none)."""
    alpha = 1.0
    for p in mesh.planes:
        for v in range(len(x0)):
            hit, t = ipctk.point_static_plane_ccd(x0[v], x1[v], p.origin, p.normal, conservative_rescaling=rescaling)
            if hit:
                alpha = min(alpha, t)
    return alpha


def _check_step(mesh, x0, x1):
    """Our step against ipctk's: never past a plane (ipctk's plane TOI at our rescaling 0.9, where ipctk's own
    stepsize uses 0.8: ours is then 0.9 / 0.8 of it), collision free by ipctk's CCD, not far below ipctk's."""
    alpha = ccd.compute_collision_free_stepsize(mesh, x0, x1)
    im = _ipctk_mesh(mesh, x0)
    f0, f1 = np.asfortranarray(x0), np.asfortranarray(x1)
    ipc_alpha = ipctk.compute_collision_free_stepsize(im, f0, f1)
    planes_09 = _plane_toi_ref(mesh, x0, x1, 0.9)
    assert alpha <= planes_09 * (1 + 1e-12)
    assert alpha >= 0.8 * ipc_alpha
    xa = x0 + alpha * (x1 - x0)
    assert ipctk.is_step_collision_free(im, f0, np.asfortranarray(xa))
    for p in mesh.planes:  # every vertex that started in front of a plane stays in front of it
        front = (x0 - p.origin) @ p.normal > 0
        assert np.all((xa[front] - p.origin) @ p.normal > 0)
    return alpha, ipc_alpha, planes_09


@pytest.mark.parametrize("seed", range(4))
def test_ccd_sheets_thrown_at_planes(seed):
    mesh, x0 = _sheets_over_planes(seed)
    rng = np.random.default_rng(50 + seed)
    x1 = x0 + rng.normal(0.0, 0.2 * DHAT, x0.shape)
    x1 -= mesh.planes[0].normal * rng.uniform(0.5, 4.0) * DHAT  # into (and through) the inclined plane
    alpha, ipc_alpha, planes_09 = _check_step(mesh, x0, x1)
    assert alpha < 1.0
    assert not ipctk.is_step_collision_free(_ipctk_mesh(mesh, x0), np.asfortranarray(x0), np.asfortranarray(x1))


def test_ccd_plane_limited_step_equals_point_plane_toi():
    """A rigid translation of the sheets (no mesh-mesh motion): the plane decides, and ours is ipctk's
    point-plane time of impact at the same rescaling, 0.9 / 0.8 times ipctk's stepsize."""
    mesh, x0 = _sheets_over_planes(2)
    x1 = x0 - 3 * DHAT * mesh.planes[0].normal
    alpha, ipc_alpha, planes_09 = _check_step(mesh, x0, x1)
    # measured: 1.5e-11 relative, the CCD's rounding margin (64 eps x 1 m coordinates against a 1 mm gap)
    assert alpha == pytest.approx(planes_09, rel=1e-9, abs=0.0)
    assert alpha == pytest.approx(ipc_alpha * 0.9 / 0.8, rel=1e-9, abs=0.0)
    assert 0.0 < alpha < 0.05


@pytest.mark.parametrize("case", ["touching", "tiny_gap", "parallel", "away", "grazing"])
def test_ccd_degenerate_point_plane(case):
    n = _unit([0.2, -0.4, 1.0])
    d0, move = {"touching": (0.0, -1.0), "tiny_gap": (1e-12, -1.0), "parallel": (0.3, 0.0), "away": (0.3, 1.0),
                "grazing": (0.3, -0.3 - 1e-12)}[case]
    mesh, x0 = _points_at([d0, 0.5], n)
    side = _unit(np.cross(n, [1.0, 0.0, 0.0]))
    x1 = x0 + move * n + 0.7 * side
    x1[1] = x0[1]
    alpha = ccd.compute_collision_free_stepsize(mesh, x0, x1)
    hit, t = ipctk.point_static_plane_ccd(x0[0], x1[0], mesh.planes[0].origin, n, conservative_rescaling=0.9)
    if case == "touching":
        assert alpha == 0.0
    elif case in ("parallel", "away"):
        assert alpha == 1.0 and not hit
    else:
        assert hit and 0.0 <= alpha <= t * (1 + 1e-9)
        xa = x0 + alpha * (x1 - x0)
        assert (xa[0] - mesh.planes[0].origin) @ n >= 0.0
        if case == "grazing":  # reaches the plane at t = 1 - 3e-12: 0.9 of it
            assert alpha == pytest.approx(0.9, rel=1e-10, abs=0.0)


def test_ccd_keeps_min_distance_from_a_plane():
    """With min_distance, the step stops 0.9 of the way to where the point comes within min_distance."""
    n = _unit([0.2, -0.4, 1.0])
    mesh, x0 = _points_at([0.3, 2.0], n)
    x1 = x0.copy()
    x1[0] -= 1.0 * n  # the point reaches distance 0.1 at t = 0.2
    alpha = ccd.compute_collision_free_stepsize(mesh, x0, x1, min_distance=0.1)
    assert alpha == pytest.approx(0.9 * 0.2, rel=1e-12, abs=0.0)  # measured: 4e-14 (rounding margin)
    d = (x0 + alpha * (x1 - x0) - mesh.planes[0].origin) @ n
    assert d[0] >= 0.1
    assert ccd.compute_collision_free_stepsize(mesh, x0, x1, min_distance=0.35) == 0.0  # starts within it
