"""Parity of the friction stencils and potential with ipctk on a two-body mesh scene.

The active set is ipctk's own NormalCollisions (copied stencil by stencil into a Collisions), so
these tests do not depend on ipcsim's active-set builder.
"""
from types import SimpleNamespace

import ipctk
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from ipcsim.contact.collisions_data import EE, EV, FV, PV, VV, Collisions
from ipcsim.contact.friction import FrictionCollisions, FrictionPotential, relative_displacement_jacobian
from ipcsim.geometry.collision_mesh import CollisionMesh, Plane
from ipcsim.geometry.mesh_io import read_mesh


KAPPA = 1e3
MU = 0.4
REL = 1e-10


def _two_bars(shared_data):
    """Two bar-186 copies, the upper one rotated, shifted, lifted 0.3 dhat above the lower one."""
    pts, cells = read_mesh(shared_data / "ipc" / "input" / "tetMeshes" / "bar-186.msh")
    cm = CollisionMesh.from_tet_mesh(pts, cells["tetra"])
    v0 = cm.rest_positions - cm.rest_positions.mean(axis=0)
    size = np.ptp(v0, axis=0).max()
    dhat = 0.05 * size
    rng = np.random.default_rng(0)
    v1 = v0 @ Rotation.from_rotvec(rng.normal(size=3) * 0.4).as_matrix().T
    v1 += rng.normal(size=3) * 0.1 * size * np.array([1.0, 1.0, 0.0])
    v1[:, 2] += v0[:, 2].max() - v1[:, 2].min() + 0.3 * dhat
    x = np.vstack([v0, v1])
    faces = np.vstack([cm.faces, cm.faces + len(v0)])
    mesh = CollisionMesh.from_triangle_mesh(x, faces)
    imesh = ipctk.CollisionMesh(x, mesh.edges.astype(np.int32), faces.astype(np.int32))
    return x, mesh, imesh, dhat


def _to_collisions(nc, imesh, dhat):
    """Our Collisions from ipctk's NormalCollisions, in ipctk's order (vv, ev, ee, fv, pv)."""
    E, F = imesh.edges, imesh.faces
    kind, verts, prims, dtype, eps_x, weight = [], [], [], [], [], []
    groups = ((VV, nc.vv_collisions), (EV, nc.ev_collisions), (EE, nc.ee_collisions),
              (FV, nc.fv_collisions), (PV, nc.pv_collisions))
    for k, group in groups:
        for c in group:
            kind.append(k)
            verts.append(list(c.vertex_ids(E, F)))
            weight.append(c.weight)
            prims.append((c.edge0_id, c.edge1_id) if k == EE else (0, 0))
            eps_x.append(c.eps_x if k == EE else 0.0)
            dtype.append(int(c.dtype) if k == EE and c.is_mollified() else -1)
    return Collisions(kind=np.array(kind, np.int64), vertices=np.array(verts, np.int64).reshape(-1, 4),
                      primitives=np.array(prims, np.int64).reshape(-1, 2), dtype=np.array(dtype, np.int64),
                      eps_x=np.array(eps_x, float), weight=np.array(weight, float), dhat=dhat)


def _tangential_list(tc):
    return list(tc.vv_collisions) + list(tc.ev_collisions) + list(tc.ee_collisions) + list(tc.fv_collisions)


@pytest.fixture(scope="module")
def scene(shared_data):
    x, mesh, imesh, dhat = _two_bars(shared_data)
    out = {}
    for improved in (False, True):
        nc = ipctk.NormalCollisions()
        if improved:
            nc.use_area_weighting = True
            nc.collision_set_type = ipctk.NormalCollisions.CollisionSetType.IMPROVED_MAX_APPROX
        nc.build(imesh, x, dhat)
        out[improved] = (nc, _to_collisions(nc, imesh, dhat))
    return SimpleNamespace(x=x, mesh=mesh, imesh=imesh, dhat=dhat, sets=out)


CASES = [(False, False), (False, True), (True, False), (True, True)]


def _build_both(scene, improved, physical, mu=MU):
    x, imesh, dhat = scene.x, scene.imesh, scene.dhat
    nc, col = scene.sets[improved]
    B = ipctk.BarrierPotential(dhat, KAPPA, physical)
    tc = ipctk.TangentialCollisions()
    tc.build(imesh, x, nc, B, mu)
    fc = FrictionCollisions.build(col, None, x, KAPPA, mu, use_physical_barrier=physical)
    return tc, fc, B


def test_scene_has_every_kind_and_parallel_edges(scene):
    nc, col = scene.sets[False]
    assert all(col.count(k) > 0 for k in (VV, EV, EE, FV))
    fc = FrictionCollisions.build(col, None, scene.x, KAPPA, MU)
    assert 0 < fc.count(EE) < col.count(EE)  # nearly parallel edge pairs were dropped
    assert np.all(col.weight >= 1)  # multiplicities of the merged duplicates
    assert np.any(scene.sets[True][1].weight < 0)  # the improved max approximator's negative terms


@pytest.mark.parametrize("improved,physical", CASES)
def test_lagged_stencils_match_ipctk(scene, improved, physical):
    tc, fc, _ = _build_both(scene, improved, physical)
    ref = _tangential_list(tc)
    assert len(fc) == len(ref)
    for k in (VV, EV, EE, FV):
        assert fc.count(k) == len({VV: tc.vv_collisions, EV: tc.ev_collisions, EE: tc.ee_collisions,
                                   FV: tc.fv_collisions}[k])
    lam = np.array([c.normal_force_magnitude for c in ref])
    np.testing.assert_allclose(fc.normal_force, lam, rtol=1e-12, atol=1e-13 * lam.max())
    np.testing.assert_allclose(fc.weight, [c.weight for c in ref], rtol=0, atol=0)
    np.testing.assert_allclose(fc.mu, [c.mu_k for c in ref], rtol=0, atol=0)
    for i, c in enumerate(ref):
        np.testing.assert_allclose(fc.tangent_basis[i], c.tangent_basis, atol=1e-12)
        cp = np.asarray(c.closest_point).ravel()
        np.testing.assert_allclose(fc.closest_point[i, : cp.size], cp, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(relative_displacement_jacobian(fc.kind[i], fc.closest_point[i]),
                                   c.relative_velocity_jacobian(), atol=1e-12)


def _rel_err(a, b):
    scale = np.abs(b).max()
    return np.abs(a - b).max() / scale if scale > 0 else np.abs(a).max()


@pytest.mark.parametrize("improved,physical", CASES)
def test_potential_matches_ipctk(scene, improved, physical):
    x, imesh, dhat = scene.x, scene.imesh, scene.dhat
    tc, fc, B = _build_both(scene, improved, physical)
    eps_u = 1e-3 * dhat
    D, Dref = FrictionPotential(eps_u, 1.0), ipctk.FrictionPotential(eps_u)
    rng = np.random.default_rng(21)
    psd = ipctk.PSDProjectionMethod
    for scale in (0.0, 0.1, 1.0, 10.0, 1000.0):
        u = rng.normal(size=x.shape) * scale * eps_u
        if scale == 0.1:
            norms = np.linalg.norm(np.einsum("kij,ki->kj", fc.tangent_basis, np.einsum(
                "ki,kij->kj", fc.gamma, np.where((fc.vertices >= 0)[..., None], u[fc.vertices], 0.0))), axis=1)
            assert np.all((norms > 0) & (norms < eps_u))
        assert D(fc, u) == pytest.approx(Dref(tc, imesh, u), rel=REL)
        assert _rel_err(D.gradient(fc, u), Dref.gradient(tc, imesh, u)) < REL
        assert _rel_err(D.hessian(fc, u, False).toarray(), Dref.hessian(tc, imesh, u).toarray()) < REL
        assert _rel_err(D.hessian(fc, u, True).toarray(),
                        Dref.hessian(tc, imesh, u, psd.CLAMP).toarray()) < REL
        if not improved or scale == 0.1:
            # ipctk's ABS zeroes (instead of mirroring) negative-weight stencils at u_k = 0 and when
            # sliding; it mirrors them only for 0 < ||u_k|| < eps_u, where both must agree
            assert _rel_err(D.hessian(fc, u, "abs").toarray(),
                            Dref.hessian(tc, imesh, u, psd.ABS).toarray()) < REL
        zeros = np.zeros_like(x)
        assert _rel_err(D.force(fc, u), Dref.force(tc, imesh, x, zeros, u, B)) < REL
        assert _rel_err(D.force(fc, u, no_mu=True), Dref.force(tc, imesh, x, zeros, u, B, 0.0, True)) < REL


def test_projected_scene_hessian_is_psd(scene):
    x, dhat = scene.x, scene.dhat
    _, fc, _ = _build_both(scene, True, True)
    assert np.any(fc.weight < 0)
    D = FrictionPotential(1e-3 * dhat, 1.0)
    u = np.random.default_rng(3).normal(size=x.shape) * 1e-3 * dhat
    H = D.hessian(fc, u, True).toarray()
    assert np.linalg.eigvalsh(H).min() >= -1e-10 * np.abs(H).max()
    assert np.linalg.eigvalsh(D.hessian(fc, u, False).toarray()).min() < -1e-6 * np.abs(H).max()


def test_vertex_mu_blending_matches_ipctk(scene):
    x, imesh, dhat = scene.x, scene.imesh, scene.dhat
    nc, col = scene.sets[False]
    vertex_mu = np.random.default_rng(5).uniform(0.1, 0.9, len(x))
    B = ipctk.BarrierPotential(dhat, KAPPA, False)
    tc = ipctk.TangentialCollisions()
    tc.build(imesh, x, nc, B, vertex_mu, vertex_mu)
    fc = FrictionCollisions.build(col, None, x, KAPPA, vertex_mu=vertex_mu)
    np.testing.assert_allclose(fc.mu, [c.mu_k for c in _tangential_list(tc)], rtol=1e-12)
    # the same coefficients given per stencil give the same set
    per_stencil = np.zeros(len(col))
    per_stencil[fc.source] = fc.mu
    fc2 = FrictionCollisions.build(col, None, x, KAPPA, per_stencil)
    np.testing.assert_array_equal(fc2.mu, fc.mu)
    eps_u = 1e-3 * dhat
    u = np.random.default_rng(6).normal(size=x.shape) * eps_u
    assert _rel_err(FrictionPotential(eps_u, 1.0).gradient(fc, u),
                    ipctk.FrictionPotential(eps_u).gradient(tc, imesh, u)) < REL


def test_plane_vertex_matches_ipctk_single_collision():
    """One PlaneVertexTangentialCollision at a time (ipctk's TangentialCollisions holds such stencils, reached by
    index only: its *_collisions lists show the mesh kinds; test_half_space_ipctk.py compares the whole set)."""
    rng = np.random.default_rng(9)
    x = np.zeros((6, 3))
    x[:, 0], x[:, 1] = np.arange(6) % 3 * 0.5, np.arange(6) // 3 * 0.5  # 0.5 apart: no vertex-vertex pairs
    normal = np.array([0.2, -0.1, 1.0])
    normal /= np.linalg.norm(normal)
    origin = np.array([0.0, 0.0, -1.05])
    x[:, 2] = -1.05 + 0.5 * rng.uniform(0.05, 0.15, 6) - x[:, :2] @ normal[:2] / normal[2]
    dhat = 0.2
    imesh = ipctk.CollisionMesh(x, np.zeros((0, 2), np.int32), np.zeros((0, 3), np.int32))
    imesh.planes = [ipctk.Hyperplane(normal, origin)]
    nc = ipctk.NormalCollisions()
    nc.build(imesh, x, dhat)
    assert len(nc.pv_collisions) == len(x)
    col = _to_collisions(nc, imesh, dhat)
    mesh = CollisionMesh.from_points(x)
    mesh.planes = [Plane(origin=origin, normal=normal)]
    eps_u = 1e-3
    for physical in (False, True):
        B = ipctk.BarrierPotential(dhat, KAPPA, physical)
        fc = FrictionCollisions.build(col, mesh, x, KAPPA, MU, use_physical_barrier=physical)
        D, Dref = FrictionPotential(eps_u, 1.0), ipctk.FrictionPotential(eps_u)
        u = rng.normal(size=x.shape) * eps_u
        for i, c in enumerate(nc.pv_collisions):
            t = ipctk.PlaneVertexTangentialCollision(c, c.dof(x, imesh.edges, imesh.faces), B)
            t.mu_s = t.mu_k = t.mu_s_effective_lagged = t.mu_k_effective_lagged = MU
            assert fc.normal_force[i] == pytest.approx(t.normal_force_magnitude, rel=1e-12)
            np.testing.assert_allclose(fc.tangent_basis[i], t.tangent_basis, atol=1e-14)
            v = fc.vertices[i, 0]
            one = FrictionCollisions(**{key: (val[[i]] if isinstance(val, np.ndarray) else val)
                                        for key, val in fc.__dict__.items()})
            assert D(one, u) == pytest.approx(Dref(t, u[v]), rel=REL)
            np.testing.assert_allclose(D.gradient(one, u)[3 * v: 3 * v + 3], Dref.gradient(t, u[v]), rtol=REL)
            np.testing.assert_allclose(D.hessian(one, u, False).toarray()[3 * v: 3 * v + 3, 3 * v: 3 * v + 3],
                                       Dref.hessian(t, u[v]), rtol=REL, atol=1e-14 * np.abs(Dref.hessian(t, u[v])).max())


@pytest.mark.parametrize("improved", [False, True])
def test_lagged_force_is_the_barrier_force_of_ipcsim_active_set(scene, improved):
    """End to end with ipcsim's own active set and barrier potential: w lambda_k is the magnitude
    of the barrier force that stencil k exerts on its first vertex divided by |gamma_0|, and that
    force is normal to the tangent plane."""
    from ipcsim.contact.barrier_potential import barrier_potential_gradient
    from ipcsim.contact.collisions import build_collisions

    x, mesh, dhat = scene.x, scene.mesh, scene.dhat
    col = build_collisions(mesh, x, dhat, use_area_weighting=improved, use_improved_max_approximator=improved)
    fc = FrictionCollisions.build(col, mesh, x, KAPPA, MU, use_physical_barrier=improved)
    assert all(fc.count(k) > 0 for k in (VV, EV, EE, FV))
    checked = 0
    for i in np.random.default_rng(0).permutation(len(fc))[:150]:
        r = fc.source[i]
        one = Collisions(**{key: (val[[r]] if isinstance(val, np.ndarray) else val) for key, val in col.__dict__.items()})
        g = barrier_potential_gradient(one, mesh, x, KAPPA, improved).reshape(-1, 3)[fc.vertices[i, 0]]
        expected = abs(fc.gamma[i, 0] * fc.weight[i]) * fc.normal_force[i]
        if expected < 1e-12 * fc.normal_force.max():
            continue
        assert np.linalg.norm(g) == pytest.approx(expected, rel=1e-9)
        assert np.linalg.norm(fc.tangent_basis[i].T @ g) <= 1e-9 * np.linalg.norm(g)
        checked += 1
    assert checked > 100


@pytest.mark.parametrize("physical", [False, True])
def test_normal_force_magnitude_matches_ipctk(physical):
    from ipcsim.contact.barrier import physical_barrier_scale
    from ipcsim.contact.friction import normal_force_magnitude

    dhat = 0.03
    B = ipctk.BarrierPotential(dhat, KAPPA, physical)
    scale = physical_barrier_scale(dhat) if physical else 1.0
    for d in np.concatenate([np.geomspace(1e-6, 0.999, 30), [1.0, 1.5]]) * dhat:
        got = normal_force_magnitude(d * d, dhat * dhat, KAPPA, scale)
        ref = B.force_magnitude(d * d, 0.0)
        assert got == pytest.approx(ref, rel=1e-12, abs=1e-300)
        assert got >= 0.0
